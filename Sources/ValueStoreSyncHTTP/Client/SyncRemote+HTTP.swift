public import Foundation
import ValueStore
public import ValueStoreSync

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SyncRemote {
    /// A remote that reaches a sync server over HTTP: `POST v1/push`, `POST v1/pull` and
    /// `GET v1/pokes` under `url`, with a bearer token from `token`.
    ///
    /// `token` is asked for a token before the first request (`rejected` is `nil`), and again,
    /// once, when the server refuses one (`rejected` is the refused token): one call for every
    /// request that saw that token refused. A second refusal throws
    /// ``ValueStore/ValueStoreError/Code/unauthorized`` and every change stays pending.
    ///
    /// A push over ``SyncHTTPOptions/maximumRequestBytes``, or refused as too large (413), goes
    /// as several, their answers merged in order; a change too large to go alone is settled as
    /// ``/ValueStoreSync/SyncPushResponse/Outcome/rejected(_:)``. A 429 is waited out; a redirect
    /// is never followed. `pokes` reads the server's event stream (or long-polls; see
    /// ``SyncHTTPOptions/Pokes``), and pokes once on every `ready`, so a reconnect always pulls.
    ///
    /// > Important: A push that fails after it may have reached the server (a lost connection,
    /// > no answer within ``SyncHTTPOptions/requestTimeout``) throws
    /// > ``/ValueStore/ValueStoreError/Code/outcomeUnknown``: the replica keeps its changes
    /// > pending and pushes them again, which the server applies once. Plain `http://` to a host
    /// > other than this machine throws ``/ValueStore/ValueStoreError/Code/invalidConfiguration``
    /// > at the first request, before anything is sent, unless
    /// > ``SyncHTTPOptions/allowsInsecureHTTP`` is set.
    ///
    /// ```swift
    /// let remote = SyncRemote.http(URL(string: "https://api.example.com/sync")!, account: account,
    ///                              options: SyncHTTPOptions()) { rejected in try await auth.token(refreshing: rejected) }
    /// ```
    ///
    /// - Parameters:
    ///   - url: Where the server's routes are mounted.
    ///   - account: The signed-in account; every request names it.
    ///   - options: How the remote talks to the server.
    ///   - token: The bearer token to send; `rejected` is the token the server just refused (`nil`
    ///     at first).
    /// - Returns: The remote.
    public static func http(
        _ url: URL,
        account: SyncAccount,
        options: SyncHTTPOptions = SyncHTTPOptions(),
        token: @escaping @Sendable (_ rejected: String?) async throws -> String
    ) -> SyncRemote {
        let client = SyncHTTPClient(
            url: url, account: account.id, options: options, tokens: SyncHTTPTokens(source: token))
        return SyncRemote(
            label: "sync server at \(url.absoluteString), account '\(account.id)'",
            push: { request in try await SyncHTTPPush(client: client, request: request).send() },
            pull: { request in
                let data = try await client.post(WireJSON.encode(request), to: "v1/pull", effect: .readOnly)
                do {
                    return try WireJSON.decode(SyncPullResponse.self, from: data)
                } catch {
                    throw ValueStoreError(
                        .unavailable, store: client.label,
                        reason: "the server's answer to a pull is not a pull response")
                }
            },
            pokes: { SyncHTTPPokes(client: client).stream() }
        )
    }
}
