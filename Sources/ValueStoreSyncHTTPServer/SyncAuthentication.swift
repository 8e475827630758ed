// The routes of a SyncHTTPService for a Hummingbird 2 app, with the `Hummingbird` trait.
#if Hummingbird
import Foundation
import HTTPTypes
public import Hummingbird
public import ValueStoreSync

/// How the routes of a ``/ValueStoreSyncHTTP/SyncHTTPService`` learn who is asking: the account a
/// request's credentials name, `nil` when they name none (401), or a throw when they cannot be
/// checked now (503).
///
/// It runs before the service sees anything of the request. ``bearer(_:)`` reads an
/// `Authorization: Bearer` token and asks your sessions or your token verifier for its account;
/// ``init(challenge:account:)`` takes any other scheme (a cookie, a header of your own).
///
/// ```swift
/// router.addRoutes(
///     service.routes(authentication: .bearer { token in try await sessions.account(for: token) }),
///     atPath: "/sync")
/// ```
///
/// > Important: A closure that throws gets a 503 answer whose text never carries the error's, which
/// > may hold the token. Return `nil` for a token you refuse: a throw says "try again later".
public struct SyncAuthentication<Context: RequestContext>: Sendable {
    /// Returns the account a request's credentials name, `nil` when they name none, or throws
    /// when they cannot be checked now.
    ///
    /// ```swift
    /// let account: SyncAuthentication<BasicRequestContext>.Account = { request, _ in
    ///     request.headers[.cookie].flatMap(sessions.account(forCookie:))
    /// }
    /// ```
    public typealias Account = @Sendable (_ request: Request, _ context: Context) async throws -> SyncAccount?

    /// The `WWW-Authenticate` challenge a 401 answer carries: `"Bearer"`.
    ///
    /// ```swift
    /// print(authentication.challenge)   // "Bearer"
    /// ```
    public var challenge: String
    /// Returns the account of a request; see ``Account``.
    ///
    /// ```swift
    /// let account = try await authentication.account(request, context)
    /// ```
    public var account: Account

    /// An authentication from its challenge and its closure.
    ///
    /// ```swift
    /// let cookies = SyncAuthentication<BasicRequestContext>(challenge: "Cookie") { request, _ in
    ///     try await sessions.account(forCookie: request.headers[.cookie])
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - challenge: The `WWW-Authenticate` value of a 401 answer.
    ///   - account: Returns the account of a request, `nil` for none, or throws when the
    ///     credentials cannot be checked now.
    public init(challenge: String, account: @escaping Account) {
        self.challenge = challenge
        self.account = account
    }

    /// Bearer tokens: the account of the token in `Authorization: Bearer TOKEN`, as `account`
    /// returns it.
    ///
    /// A request without the header, with another scheme or with an empty token is answered 401
    /// without calling `account`; so is one whose token `account` maps to `nil`. The 401 answer
    /// carries `WWW-Authenticate: Bearer`, which tells the client to fetch a new token.
    ///
    /// ```swift
    /// let authentication = SyncAuthentication<BasicRequestContext>.bearer { token in
    ///     try await sessions.account(for: token)
    /// }
    /// ```
    ///
    /// - Parameter account: The account of a token, `nil` for a token you refuse (unknown,
    ///   expired, badly signed, for another audience); throws when it cannot check the token now.
    /// - Returns: The authentication.
    public static func bearer(
        _ account: @escaping @Sendable (_ token: String) async throws -> SyncAccount?
    ) -> Self {
        Self(challenge: "Bearer") { request, _ in
            guard let token = bearerToken(in: request.headers[.authorization]) else { return nil }
            return try await account(token)
        }
    }

    /// The token of an `Authorization` value `Bearer TOKEN` (the scheme in any case), or `nil`.
    private static func bearerToken(in authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
#endif
