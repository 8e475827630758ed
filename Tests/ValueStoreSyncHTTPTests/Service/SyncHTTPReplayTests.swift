import Foundation
import Testing
import ValueStoreSync
import ValueStoreSyncHTTP

/// Nothing applied twice: a push's body, captured off the wire and sent again and again (a
/// proxy's retries, a client that never saw its answers), leaves the server as the first did.
@Suite struct SyncHTTPReplayTests {
    let account = SyncAccount(id: "user-42")

    func stamp(_ milliseconds: Int64, _ replica: String) -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: 0, replica: ReplicaID(replica))
    }

    /// Everything a replica can learn of the account: the records and the phone's archived
    /// changes, as a whole-state pull brings them, and the server's archive.
    func everything(_ service: SyncHTTPService, _ server: InMemorySyncServer) async throws -> [String] {
        let pull = SyncPullRequest(
            account: account.id, replica: ReplicaID("phone"), epoch: nil, cursor: .zero, seen: .zero, limit: 500,
            isResync: true)
        let response = await service.respond(to: try Requests.http("v1/pull", pull), account: account)
        let page = try JSONDecoder().decode(SyncPullResponse.self, from: try Requests.bytes(of: response))
        return [
            "\(page.records)", "\(page.conflicts)", "\(page.head)",
            "\(try await server.archivedConflicts(for: account))",
        ]
    }

    @Test func aCapturedPushReplayedAHundredTimesHasTheEffectOfOne() async throws {
        let server = InMemorySyncServer()
        let service = SyncHTTPService(remote: server.remote(for:))
        let epoch = try await Requests.epoch(of: account, on: server)
        let laptop = SyncPushRequest(
            account: account.id, replica: ReplicaID("laptop"), epoch: epoch, seen: .zero, cursor: .zero,
            changes: [
                SyncRecord(
                    key: "theme", value: Data(#""light""#.utf8), stamp: stamp(1_700_000_000_500, "laptop"), base: nil,
                    policy: .lastWriterWins)
            ])
        #expect(await service.respond(to: try Requests.http("v1/push", laptop), account: account).status == 200)
        let phone = SyncPushRequest(
            account: account.id, replica: ReplicaID("phone"), epoch: epoch, seen: .zero, cursor: .zero,
            changes: [
                SyncRecord(
                    key: "theme", value: Data(#""dark""#.utf8), stamp: stamp(1_700_000_000_000, "phone"), base: nil,
                    policy: .lastWriterWins),
                SyncRecord(
                    key: "draft", value: Data(#""Dear""#.utf8), stamp: stamp(1_700_000_000_001, "phone"), base: nil,
                    policy: .saveBeatsRemove),
            ])
        let captured = try JSONEncoder().encode(phone)
        func replay() async -> SyncHTTPResponse {
            let request = SyncHTTPRequest(
                method: "POST", path: "v1/push", contentLength: captured.count, body: { _ in captured })
            return await service.respond(to: request, account: account)
        }
        let first = await replay()
        #expect(first.status == 200)
        let answer = try JSONDecoder().decode(SyncPushResponse.self, from: try Requests.bytes(of: first))
        guard case .lost = answer.outcomes.first else {
            Issue.record("the phone's older theme was answered \(String(describing: answer.outcomes.first))")
            return
        }
        let afterFirst = try await everything(service, server)
        #expect(try await server.archivedConflicts(for: account).count == 1)
        for _ in 0..<100 {
            #expect(await replay().status == 200)
        }
        #expect(try await everything(service, server) == afterFirst)
    }
}
