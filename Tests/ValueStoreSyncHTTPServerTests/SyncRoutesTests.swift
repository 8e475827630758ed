// The Hummingbird routes' tests, with the `Hummingbird` trait.
#if Hummingbird
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreSyncHTTPServer

@Suite(.timeLimit(.minutes(1))) struct SyncRoutesTests {
    let harness = RoutesHarness()

    @Test(arguments: [nil, "Basic dXNlcjpwYXNz", "Bearer ", "Bearer token-"])
    func aRequestWithoutABearerTokenIsUnauthorized(authorization: String?) async throws {
        let asked = Asked()
        let app = harness.app(
            authentication: .bearer { token in
                asked.record(token)
                return nil
            })
        try await app.test(.router) { client in
            var headers = RoutesHarness.headers(token: nil)
            headers[.authorization] = authorization
            let response = try await client.execute(
                uri: "/sync/v1/push", method: .post, headers: headers, body: try RoutesHarness.emptyPush(naming: "a"))
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try Problem(response.body).code == "unauthorized")
        }
        // Only a token is ever shown to the closure: "Bearer token-" has one ("token-"), refused.
        #expect(asked.tokens == (authorization == "Bearer token-" ? ["token-"] : []))
    }

    @Test(arguments: [TestingSetup.router, .live])
    func aRefusedTokenIsUnauthorized(setup: TestingSetup) async throws {
        try await harness.app().test(setup) { client in
            let response = try await client.execute(
                uri: "/sync/v1/pull", method: .post, headers: RoutesHarness.headers(token: "expired-42"),
                body: try RoutesHarness.emptyPush(naming: "42"))
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
            #expect(try Problem(response.body).code == "unauthorized")
        }
    }

    @Test func credentialsThatCannotBeCheckedAnswer503WithoutTheErrorsText() async throws {
        struct SessionsDown: Error, CustomStringConvertible {
            let token: String
            var description: String { "no session store for \(token)" }
        }
        let app = harness.app(authentication: .bearer { token in throw SessionsDown(token: token) })
        try await app.test(.router) { client in
            let response = try await client.execute(
                uri: "/sync/v1/push", method: .post, headers: RoutesHarness.headers(token: "secret-token-42"),
                body: try RoutesHarness.emptyPush(naming: "42"))
            #expect(response.status == .serviceUnavailable)
            #expect(try Problem(response.body).code == "unavailable")
            #expect(!String(buffer: response.body).contains("secret-token-42"))
            #expect(response.headers[.wwwAuthenticate] == nil)
        }
    }

    @Test func aPushNamingAnotherAccountIsForbidden() async throws {
        try await harness.app().test(.router) { client in
            let response = try await client.execute(
                uri: "/sync/v1/push", method: .post, headers: RoutesHarness.headers(token: RoutesHarness.token("42")),
                body: try RoutesHarness.emptyPush(naming: "someone-else"))
            #expect(response.status == .forbidden)
            #expect(try Problem(response.body).code == "forbidden")
        }
    }

    @Test(arguments: [TestingSetup.router, .live])
    func twoDevicesSyncThroughTheRoutes(setup: TestingSetup) async throws {
        let account = SyncAccount(id: "user-42")
        try await withTemporaryDirectory { directory in
            try await harness.app().test(setup) { client in
                let remote = RoutesHarness.remote(through: client, account: account)
                let phone = try SyncReplica(
                    directory: directory.appending(path: "phone"), account: account, remote: remote)
                let laptop = try SyncReplica(
                    directory: directory.appending(path: "laptop"), account: account, remote: remote)
                try await phone.store("theme", as: String.self).save("dark")
                try await phone.syncNow()
                try await laptop.syncNow()
                #expect(try await laptop.store("theme", as: String.self).load() == "dark")
                #expect(phone.status.pendingChanges == 0)
            }
        }
        // The server holds it for the account, as the routes put it there.
        let direct = try await harness.server.remote(for: account).pull(
            SyncPullRequest(
                account: account.id, replica: ReplicaID("check"), epoch: nil, cursor: .zero, seen: .zero, limit: 10,
                isResync: false))
        #expect(direct.records.map(\.key) == ["theme"])
    }

    @Test func theRoutesAnswerUnderAnyMountAndAnUnknownPathIsAProblem() async throws {
        try await harness.app(mount: "/api/sync").test(.router) { client in
            let headers = RoutesHarness.headers(token: RoutesHarness.token("42"))
            let pull = SyncPullRequest(
                account: "42", replica: ReplicaID("device-1"), epoch: nil, cursor: .zero, seen: .zero, limit: 10,
                isResync: false)
            let answered = try await client.execute(
                uri: "/api/sync/v1/pull", method: .post, headers: headers,
                body: ByteBuffer(bytes: try JSONEncoder().encode(pull)))
            #expect(answered.status == .ok)
            #expect(answered.headers[.contentType] == "application/json")
            let unknown = try await client.execute(uri: "/api/sync/v1/nothing", method: .post, headers: headers)
            #expect(unknown.status == .notFound)
            #expect(unknown.headers[.contentType] == "application/problem+json")
            #expect(try Problem(unknown.body).code == "notFound")
        }
    }

    @Test func aBodyOverTheLimitIsTooLarge() async throws {
        var harness = RoutesHarness()
        harness.limits.maximumRequestBytes = 100
        try await harness.app().test(.router) { client in
            let response = try await client.execute(
                uri: "/sync/v1/push", method: .post, headers: RoutesHarness.headers(token: RoutesHarness.token("42")),
                body: ByteBuffer(bytes: Array(repeating: UInt8(ascii: " "), count: 101)))
            #expect(response.status == .contentTooLarge)
            #expect(try Problem(response.body).code == "invalidConfiguration")
        }
    }

    @Test func aDeclaredLengthOverTheLimitIsTooLargeBeforeTheBodyIsRead() async throws {
        var harness = RoutesHarness()
        harness.limits.maximumRequestBytes = 100
        try await harness.app().test(.router) { client in
            var headers = RoutesHarness.headers(token: RoutesHarness.token("42"))
            // The body never comes: only the declared length can tell.
            headers[.contentLength] = "10000000"
            let response = try await client.execute(uri: "/sync/v1/push", method: .post, headers: headers)
            #expect(response.status == .contentTooLarge)
        }
    }
}

/// The tokens an authentication closure was shown.
final class Asked: Sendable {
    private let seen = Mutex<[String]>([])
    var tokens: [String] { seen.withLock { $0 } }
    func record(_ token: String) { seen.withLock { $0.append(token) } }
}
#endif
