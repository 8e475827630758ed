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
    /// once, when the server refuses one (`rejected` is the refused token); a second refusal
    /// throws ``ValueStore/ValueStoreError/Code/unauthorized`` and every change stays pending.
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
        let client = SyncHTTPClient(url: url, account: account, options: options, token: token)
        return SyncRemote(
            label: "sync server at \(url.absoluteString), account '\(account.id)'",
            push: { request in try await client.send(request, to: "v1/push") },
            pull: { request in try await client.send(request, to: "v1/pull") }
        )
    }
}

/// The requests of one HTTP remote: JSON in and out, a bearer token, problems turned back into
/// errors.
struct SyncHTTPClient: Sendable {
    let url: URL
    let account: SyncAccount
    let options: SyncHTTPOptions
    let token: @Sendable (_ rejected: String?) async throws -> String

    var label: String { "sync server at \(url.absoluteString)" }

    func send<Body: Encodable, Answer: Decodable>(_ body: Body, to route: String) async throws -> Answer {
        var request = URLRequest(url: url.appendingPathComponent(route))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(try await token(nil))", forHTTPHeaderField: "Authorization")
        request.httpBody = try JSONEncoder().encode(body)
        let (data, head) = try await options.transport.send(request)
        guard head.statusCode == 200 else {
            let problem = try? JSONDecoder().decode(SyncHTTPProblem.self, from: data)
            throw problem?.error(from: label)
                ?? ValueStoreError(.unavailable, store: label, reason: "the server answered \(head.statusCode)")
        }
        return try JSONDecoder().decode(Answer.self, from: data)
    }
}
