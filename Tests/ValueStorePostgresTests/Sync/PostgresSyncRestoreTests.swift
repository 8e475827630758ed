#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreSync

extension PostgresTests {
    /// A restore of the sync tables from a dump while replicas keep pushing and pulling, as the
    /// chaos schedule's restore is (``PostgresServer/restore(_:of:)``): it ends, every time, and
    /// the server is never left half restored.
    @Suite struct SyncRestore {
        @Test func aRestoreWhileReplicasPushAndPullIsNeverADeadlockVictim() async throws {
            try await SyncTable.withTable { table, account, folder, _ in
                let replicas = try (0..<4).map { index in
                    try SyncTable.replica("r\(index)", in: folder, account: account, remote: table.remote(for: account))
                }
                for (index, replica) in replicas.enumerated() {
                    try await replica.store("theme", as: String.self).save("dark \(index)")
                    try await replica.syncNow()
                }
                let dump = folder.appending(path: "sync.dump")
                try await PostgresServer.dump(table, to: dump)
                let failures = await withTaskGroup(of: Void.self) { group in
                    for (index, replica) in replicas.enumerated() {
                        group.addTask {
                            var count = 0
                            while !Task.isCancelled {
                                count += 1
                                // The traffic's own failures are not this test's claim: a
                                // statement that waited for a table the restore dropped fails.
                                _ = try? await replica.store("count \(index)", as: Int.self).save(count)
                                _ = try? await replica.syncNow()
                            }
                        }
                    }
                    defer { group.cancelAll() }
                    var failures: [String] = []
                    for round in 1...20 {
                        do {
                            try await PostgresServer.restore(dump, of: table)
                        } catch {
                            failures.append("restore \(round): \(error)")
                        }
                    }
                    return failures
                }
                #expect(
                    failures.isEmpty, "\(failures.count) of 20 restores failed:\n\(failures.joined(separator: "\n"))")
            }
        }
    }
}
#endif
