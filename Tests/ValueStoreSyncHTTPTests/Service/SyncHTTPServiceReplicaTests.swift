import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP

/// A real replica syncing through the service, its requests and answers as JSON as the HTTP
/// client sends them, without a socket: what the service answers is what a replica can use.
@Suite struct SyncHTTPServiceReplicaTests {
    let account = SyncAccount(id: "user-42")

    /// A remote that sends each request through `service` as JSON and decodes the answer.
    func remote(through service: SyncHTTPService) -> SyncRemote {
        SyncRemote(
            label: "through the service",
            push: { request in try await send(request, to: "v1/push", through: service) },
            pull: { request in try await send(request, to: "v1/pull", through: service) })
    }

    func send<Answer: Decodable>(
        _ body: some Encodable,
        to path: String,
        through service: SyncHTTPService
    ) async throws -> Answer {
        let response = await service.respond(to: try Requests.http(path, body), account: account)
        guard response.status == 200 else {
            throw ValueStoreError(.unavailable, store: "the service", reason: "answered \(response.status)")
        }
        return try JSONDecoder().decode(Answer.self, from: try Requests.bytes(of: response))
    }

    @Test func aValueOverTheLimitIsRejectedAndKeptWhileTheRestSync() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appending(path: "SyncHTTPServiceReplicaTests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var limits = SyncHTTPLimits()
        limits.maximumValueBytes = 64
        let recording = RecordingRemote()
        let service = SyncHTTPService(limits: limits, remote: recording.remote(for:))
        var options = SyncOptions()
        options.fileOptions = .cache
        let replica = try SyncReplica(
            directory: folder, account: account, remote: remote(through: service), options: options)
        try await replica.store("theme", as: String.self).save("dark")
        try await replica.store("notes", as: String.self).save(String(repeating: "x", count: 100))
        try await replica.syncNow()

        #expect(replica.status.pendingChanges == 0)
        let rejected = try #require(replica.status.rejectedChanges.first)
        #expect(replica.status.rejectedChanges.count == 1)
        #expect(rejected.key == "notes")
        #expect(rejected.value.map { $0.count > 64 } == true)
        #expect(rejected.reason?.hasSuffix("bytes, over the server's limit of 64") == true)
        #expect(recording.server.state(of: account)?.records.keys.sorted() == ["theme"])

        try await replica.syncNow()
        #expect(replica.status.rejectedChanges.count == 1)
        #expect(recording.pushes.allSatisfy { !$0.changes.contains { $0.key == "notes" } })
    }
}
