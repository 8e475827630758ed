#if Hummingbird
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreSyncHTTPServer

/// An app with the sync routes mounted at `/sync` over an in-memory server, whose bearer tokens
/// are `token-ACCOUNT` (any other token is refused), and the requests the tests send it.
struct RoutesHarness: Sendable {
    let server = InMemorySyncServer()
    var limits = SyncHTTPLimits()

    /// The token of an account: what the harness's authentication takes.
    static func token(_ account: String) -> String { "token-\(account)" }

    /// The app: the routes under `mount`, authenticated by `authentication` or by the harness's
    /// tokens.
    func app(
        mount: String = "/sync",
        authentication: SyncAuthentication<BasicRequestContext>? = nil
    ) -> some ApplicationProtocol {
        let service = SyncHTTPService(limits: limits, remote: server.remote(for:))
        let router = Router()
        router.addRoutes(
            service.routes(
                authentication: authentication
                    ?? .bearer { token in
                        token.hasPrefix("token-") ? SyncAccount(id: String(token.dropFirst("token-".count))) : nil
                    }),
            atPath: RouterPath(mount))
        return Application(router: router)
    }

    /// The headers of a JSON request with `token`, when there is one.
    static func headers(token: String?) -> HTTPFields {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token {
            headers[.authorization] = "Bearer \(token)"
        }
        return headers
    }

    /// A remote whose pushes and pulls go through the routes, as `account`'s token.
    static func remote(through client: any TestClientProtocol, account: SyncAccount) -> SyncRemote {
        SyncRemote(
            label: "routes",
            push: { try await send($0, to: "v1/push", through: client, as: account) },
            pull: { try await send($0, to: "v1/pull", through: client, as: account) })
    }

    /// Sends `body` to `route` and decodes the answer, throwing for any status but 200.
    static func send<Body: Encodable, Answer: Decodable>(
        _ body: Body, to route: String, through client: any TestClientProtocol, as account: SyncAccount
    ) async throws -> Answer {
        let response = try await client.execute(
            uri: "/sync/\(route)", method: .post, headers: headers(token: token(account.id)),
            body: ByteBuffer(bytes: try JSONEncoder().encode(body)))
        guard response.status.code == 200 else {
            throw ValueStoreError(.unavailable, store: "routes", reason: "answered \(response.status.code)")
        }
        return try JSONDecoder().decode(Answer.self, from: Data(response.body.readableBytesView))
    }

    /// A push of no changes that names `account`.
    static func emptyPush(naming account: String) throws -> ByteBuffer {
        let request = SyncPushRequest(
            account: account, replica: ReplicaID("device-1"), epoch: nil, seen: .zero, cursor: .zero, changes: [])
        return ByteBuffer(bytes: try JSONEncoder().encode(request))
    }
}

/// The problem document of an error answer.
struct Problem: Decodable, Equatable {
    var status: Int
    var code: String
    var detail: String?

    init(_ body: ByteBuffer) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(body.readableBytesView))
    }
}

/// A temporary directory for a test, removed after `body`.
func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let directory = FileManager.default.temporaryDirectory.appending(path: "sync-routes-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}
#endif
