// The code shown in Documentation/ServingSyncOverHTTP.md, compiled and run, with the
// `Hummingbird` trait.
#if Hummingbird
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreSyncHTTPServer

/// An app's sessions, as the guide's opaque-token example looks them up.
final class Sessions: Sendable {
    private let accounts = Mutex<[String: String]>([:])

    func start(token: String, account: String) { accounts.withLock { $0[token] = account } }

    /// The account of a session token, `nil` for a token no session has.
    func account(for token: String) async throws -> SyncAccount? {
        accounts.withLock { $0[token] }.map { SyncAccount(id: $0) }
    }
}

/// The claims of the guide's jwt-kit example.
struct SessionClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

@Suite(.timeLimit(.minutes(1))) struct ServingGuideExamplesTests {
    @Test func mountingTheRoutesWithOpaqueTokens() async throws {
        let sessions = Sessions()
        sessions.start(token: "opaque-42", account: "user-42")
        let server = InMemorySyncServer()
        let service = SyncHTTPService(limits: SyncHTTPLimits(), remote: server.remote(for:))
        let router = Router()
        router.addRoutes(
            service.routes(authentication: .bearer { token in try await sessions.account(for: token) }),
            atPath: "/sync")
        let app = Application(router: router)

        try await app.test(.router) { client in
            let pull = SyncPullRequest(
                account: "user-42", replica: ReplicaID("device-1"), epoch: nil, cursor: .zero, seen: .zero,
                limit: 10, isResync: false)
            let answer = try await client.execute(
                uri: "/sync/v1/pull", method: .post, headers: [.authorization: "Bearer opaque-42"],
                body: ByteBuffer(bytes: try JSONEncoder().encode(pull)))
            #expect(answer.status == .ok)
            let refused = try await client.execute(
                uri: "/sync/v1/pull", method: .post, headers: [.authorization: "Bearer opaque-7"])
            #expect(refused.status == .unauthorized)
        }
    }

    @Test func jsonWebTokens() async throws {
        let secret = "a-secret-of-at-least-32-bytes-long"
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let authentication = SyncAuthentication<BasicRequestContext>.bearer { token in
            guard let claims = try? await keys.verify(token, as: SessionClaims.self) else { return nil }
            return SyncAccount(id: claims.sub.value)
        }
        var limits = SyncHTTPLimits()
        limits.maximumRequestBytes = 4 << 20
        limits.requestsPerMinutePerAccount = 1_200
        let service = SyncHTTPService(limits: limits, remote: InMemorySyncServer().remote(for:))
        let router = Router()
        router.addRoutes(service.routes(authentication: authentication), atPath: "/sync")

        let token = try await keys.sign(
            SessionClaims(sub: "user-42", exp: ExpirationClaim(value: Date().addingTimeInterval(300))))
        let expired = try await keys.sign(
            SessionClaims(sub: "user-42", exp: ExpirationClaim(value: Date().addingTimeInterval(-60))))
        try await Application(router: router).test(.router) { client in
            let pull = SyncPullRequest(
                account: "user-42", replica: ReplicaID("device-1"), epoch: nil, cursor: .zero, seen: .zero,
                limit: 10, isResync: false)
            for (token, status) in [(token, HTTPResponse.Status.ok), (expired, .unauthorized)] {
                let answer = try await client.execute(
                    uri: "/sync/v1/pull", method: .post, headers: [.authorization: "Bearer \(token)"],
                    body: ByteBuffer(bytes: try JSONEncoder().encode(pull)))
                #expect(answer.status == status)
            }
        }
    }
}
#endif
