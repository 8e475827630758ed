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

    /// Accounts are told apart by their ids' bytes, as the server's database tells them apart:
    /// `café` with `é` and `café` with `e` and a combining accent, which Swift's `==` calls equal,
    /// are two accounts, and neither reaches the other's values or pokes.
    @Test func anAccountNamedWithOtherBytesThatUnicodeCallsEqualIsAnotherAccount() async throws {
        let composed = SyncAccount(id: "caf\u{E9}")
        let decomposed = SyncAccount(id: "cafe\u{301}")
        #expect(composed.id == decomposed.id)
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)

        let recording = RecordingRemote()
        let service = SyncHTTPService(remote: recording.remote(for:))
        let pull = try Requests.http("v1/pull", Requests.pull(account: decomposed.id))
        #expect(await service.respond(to: pull, account: composed).status == 403)
        let push = try Requests.http(
            "v1/push", Requests.push([Requests.change("theme", Data("dark".utf8))], account: decomposed.id))
        #expect(await service.respond(to: push, account: composed).status == 403)
        #expect(recording.pushes.isEmpty && recording.pulls.isEmpty)

        // The in-memory server keeps them apart too.
        let server = InMemorySyncServer()
        let epoch = try await Requests.epoch(of: decomposed, on: server)
        _ = try await server.remote(for: decomposed).push(
            Requests.push([Requests.change("theme", Data("dark".utf8))], account: decomposed.id, epoch: epoch))
        let page = try await server.remote(for: composed).pull(Requests.pull(account: composed.id))
        #expect(page.records.isEmpty)
    }

    @Test func aRequestWithoutAnAccountIsUnauthorized() async throws {
        let service = SyncHTTPService(remote: InMemorySyncServer().remote(for:))
        let response = await service.respond(to: SyncHTTPRequest(method: "POST", path: "v1/pull"), account: nil)
        #expect(response.status == 401)
    }
}
