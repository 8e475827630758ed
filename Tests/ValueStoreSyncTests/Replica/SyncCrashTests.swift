import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// A returned local save survives `kill -9`, with its outbox mark.
@Suite(.timeLimit(.minutes(2))) struct SyncCrashTests {
    @Test func everyReturnedSaveSurvivesAKill() async throws {
        try await SyncSandbox.with { sandbox in
            let directory = sandbox.folder("device")
            var reported = 0
            for round in 0..<8 {
                let writer = try HelperProcess("sync-save-loop", directory.path(percentEncoded: false))
                // Killed after a few of its saves returned: partway through the next ones.
                for _ in 0..<(2 + round % 4) {
                    guard
                        let line = try await within(.seconds(60), "the writer's next save", { await writer.nextLine() })
                    else { break }
                    reported = max(reported, Int(line) ?? 0)
                }
                writer.kill()
                reported = max(reported, writer.lines().compactMap { Int($0) }.last ?? 0)

                // Reopened with no server at all: what the file holds, and nothing else.
                let unreachable = SyncRemote(
                    label: "unreachable",
                    push: { _ in throw ValueStoreError(.unavailable, store: "unreachable") },
                    pull: { _ in throw ValueStoreError(.unavailable, store: "unreachable") })
                let replica = try SyncReplica(
                    directory: directory, account: SyncAccount(id: "crash"), remote: unreachable)
                let sequence = try await replica.store("sequence", as: Int.self).load()
                #expect(sequence >= reported, "a save that returned is gone")
                for key in 0..<10 where reported >= key {
                    // The last reported save of this key, or a later one.
                    let last = reported - ((reported - key) % 10 + 10) % 10
                    guard last > 0 else { continue }
                    #expect(try await replica.store("key\(key)", as: Int.self).load() >= last)
                }
                // Each record is either pending or acknowledged, and the status counts the pending.
                let records = replica.records
                #expect(replica.status.pendingChanges == records.values.filter { $0.version == nil }.count)
                #expect(!records.isEmpty)
            }
            #expect(reported > 0, "the helper never finished a save")
        }
    }
}
