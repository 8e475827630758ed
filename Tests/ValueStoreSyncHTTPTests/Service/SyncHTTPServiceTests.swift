import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP

@Suite struct SyncHTTPServiceTests {
    let account = SyncAccount(id: "user-42")

    func push(_ body: SyncPushRequest) throws -> SyncHTTPRequest {
        let data = try JSONEncoder().encode(body)
        return SyncHTTPRequest(method: "POST", path: "v1/push", contentLength: data.count, body: { _ in data })
    }

    @Test func aPushOfAnotherAccountIsForbiddenBeforeTheServerSeesIt() async throws {
        let server = InMemorySyncServer()
        let service = SyncHTTPService(remote: server.remote(for:))
        let request = SyncPushRequest(
            account: "someone-else", replica: ReplicaID("device-1"), epoch: nil, seen: ServerVersion(0),
            cursor: ServerVersion(0), changes: [])
        let response = await service.respond(to: try push(request), account: account)
        #expect(response.status == 403)
    }

    @Test func aRequestWithoutAnAccountIsUnauthorized() async throws {
        let service = SyncHTTPService(remote: InMemorySyncServer().remote(for:))
        let response = await service.respond(to: SyncHTTPRequest(method: "POST", path: "v1/pull"), account: nil)
        #expect(response.status == 401)
    }
}
