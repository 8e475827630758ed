import Foundation
import Synchronization
import ValueStore
public import ValueStoreSync

/// Sync over HTTP, in no web framework: it answers a ``SyncHTTPRequest`` of an authenticated
/// account with a ``SyncHTTPResponse``, through the account's ``/ValueStoreSync/SyncRemote``.
///
/// An adapter authenticates the request, turns it into a ``SyncHTTPRequest`` and writes the
/// answer; the Hummingbird routes of `ValueStoreSyncHTTPServer` are one. The routes, under the
/// adapter's mount, are `POST v1/push` and `POST v1/pull` (the JSON of ``/ValueStoreSync/SyncPushRequest`` and
/// ``/ValueStoreSync/SyncPullRequest``), and `GET v1/pokes` (server-sent events; `?wait=SECONDS` long-polls).
/// Errors are `application/problem+json` naming the ``/ValueStore/ValueStoreError/Code``.
///
/// Before any backend call the service checks, in order: an account (401), a known route (404),
/// the account's request rate (429, with `retry-after`), a declared `content-length` within
/// ``SyncHTTPLimits/maximumRequestBytes`` (413, the body unread), a body that decodes (400), and
/// that the body names the authenticated account (403). A push's changes whose values are over
/// ``SyncHTTPLimits/maximumValueBytes`` are answered rejected, and the rest go to the remote.
/// Copies of a service share its rate limits and its poke streams.
///
/// ```swift
/// let service = SyncHTTPService(limits: SyncHTTPLimits(), remote: table.remote(for:))
/// let response = await service.respond(to: request, account: SyncAccount(id: "user-42"))
/// ```
public struct SyncHTTPService: Sendable {
    /// What the service accepts.
    ///
    /// ```swift
    /// print(service.limits.maximumRequestBytes)
    /// ```
    public let limits: SyncHTTPLimits
    /// The remote of each account: the server the service fronts.
    ///
    /// ```swift
    /// let remote = service.remote(SyncAccount(id: "user-42"))
    /// ```
    public let remote: @Sendable (_ account: SyncAccount) -> SyncRemote
    /// What every copy of the service shares: the rate limiter and the poke streams.
    let shared: Shared

    /// A service in front of a sync server.
    ///
    /// ```swift
    /// let service = SyncHTTPService(limits: SyncHTTPLimits(), remote: table.remote(for:))
    /// let inMemory = SyncHTTPService(remote: InMemorySyncServer().remote(for:))
    /// ```
    ///
    /// - Parameters:
    ///   - limits: What the service accepts; the defaults by default.
    ///   - remote: The remote of each account.
    public init(
        limits: SyncHTTPLimits = SyncHTTPLimits(),
        remote: @escaping @Sendable (_ account: SyncAccount) -> SyncRemote
    ) {
        self.limits = limits
        self.remote = remote
        self.shared = Shared(limits: limits, remote: remote)
    }

    /// Answers one request of an account.
    ///
    /// ```swift
    /// let response = await service.respond(to: request, account: try await sessions.account(for: token))
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request, its path under the mount.
    ///   - account: The authenticated account; `nil` (no or a refused credential) answers 401.
    /// - Returns: The answer; failures are problem documents, never thrown.
    public func respond(to request: SyncHTTPRequest, account: SyncAccount?) async -> SyncHTTPResponse {
        guard let account else {
            return SyncHTTPProblem(status: 401, code: .unauthorized, detail: "no valid credentials").response
        }
        let route = (request.method, request.path)
        guard [("POST", "v1/push"), ("POST", "v1/pull"), ("GET", "v1/pokes")].contains(where: { $0 == route }) else {
            return SyncHTTPProblem(status: 404, code: .notFound, detail: "no route \(request.method) \(request.path)")
                .response
        }
        let admission = shared.limiter.withLock { $0.admit(account, at: .now) }
        if case .limited(let seconds) = admission {
            var response = SyncHTTPProblem(
                status: 429, code: .unavailable,
                detail: "over \(limits.requestsPerMinutePerAccount) requests a minute; retry after \(seconds) s"
            ).response
            response.headers["retry-after"] = String(seconds)
            return response
        }
        switch route {
        case ("POST", "v1/push"):
            return await answer(request) { (body: SyncPushRequest) in
                try Self.check(body.account, is: account)
                return try await push(body, of: account)
            }
        case ("POST", "v1/pull"):
            return await answer(request) { (body: SyncPullRequest) in
                try Self.check(body.account, is: account)
                return try await remote(account).pull(body)
            }
        default:
            return await pokes(request, of: account)
        }
    }

    /// Decodes the body, runs `operation` and encodes its answer, or answers the problem.
    ///
    /// Not inlined: ``respond(to:account:)`` would then take the frame of both of its uses (a
    /// push's and a pull's values) on every request, a poke stream's too, and the connection's
    /// task keeps the largest frame it ever took for as long as the stream is open (about 1.9 KiB
    /// a stream, measured by `SyncHTTPStreams`).
    @inline(never)
    private func answer<Body: Decodable, Answer: Encodable>(
        _ request: SyncHTTPRequest,
        _ operation: (Body) async throws -> Answer
    ) async -> SyncHTTPResponse {
        if let length = request.contentLength, length > limits.maximumRequestBytes {
            return tooLarge
        }
        let body: Body
        do {
            let data = try await request.body(limits.maximumRequestBytes)
            body = try WireJSON.decode(Body.self, from: data)
        } catch is SyncHTTPRequest.BodyTooLarge {
            return tooLarge
        } catch {
            return SyncHTTPProblem(status: 400, code: .decodingFailed, detail: "the body is not a valid request")
                .response
        }
        do {
            let answer = try await operation(body)
            return SyncHTTPResponse(
                status: 200, headers: ["content-type": "application/json"],
                body: .bytes(try WireJSON.encode(answer)))
        } catch {
            return SyncHTTPProblem(error).response
        }
    }

    /// The answer to a request over ``SyncHTTPLimits/maximumRequestBytes``.
    private var tooLarge: SyncHTTPResponse {
        SyncHTTPProblem(
            status: 413, code: .invalidConfiguration, detail: "the request is over \(limits.maximumRequestBytes) bytes"
        ).response
    }

    /// Throws ``ValueStoreError/Code/forbidden`` when a request names another account.
    static func check(_ named: String, is account: SyncAccount) throws {
        // By the ids' bytes (``SyncAccount``'s equality), as the server's database compares
        // them: a name only Unicode calls equal is another account.
        guard SyncAccount(id: named) == account else {
            throw ValueStoreError(
                .forbidden, store: "sync over HTTP", reason: "the request names another account than the signed-in one")
        }
    }
}

extension SyncHTTPService {
    /// What every copy of a service shares.
    final class Shared: Sendable {
        let limiter: Mutex<SyncHTTPRateLimiter>
        let pokes: SyncPokeHub

        init(limits: SyncHTTPLimits, remote: @escaping @Sendable (_ account: SyncAccount) -> SyncRemote) {
            self.limiter = Mutex(SyncHTTPRateLimiter(requestsPerMinute: limits.requestsPerMinutePerAccount))
            self.pokes = SyncPokeHub(heartbeat: limits.pokeHeartbeat, remote: remote)
        }
    }
}
