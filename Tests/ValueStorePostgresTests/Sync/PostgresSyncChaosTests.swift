#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStorePostgres

extension PostgresTests {
    /// Seeded random schedules of device processes syncing through PostgreSQL while the network,
    /// the devices and the server fail, each followed by a check of every invariant (see
    /// ``PostgresSyncChaosSchedule``). `VALUESTORE_SYNC_CHAOS_ROUNDS` sets how many schedules run
    /// (3 by default, each within the suite's minute), `VALUESTORE_SYNC_CHAOS_SEED` the first
    /// seed; a failure shows its seed and schedule, and
    /// `VALUESTORE_SYNC_CHAOS_ROUNDS=1 VALUESTORE_SYNC_CHAOS_SEED=<seed>` plays it again (the
    /// steps, not the timing of each device's background sync).
    @Suite struct PostgresSyncChaosTests {
        static let environment = ProcessInfo.processInfo.environment
        static let rounds = environment["VALUESTORE_SYNC_CHAOS_ROUNDS"].flatMap(Int.init) ?? 3
        static let firstSeed = environment["VALUESTORE_SYNC_CHAOS_SEED"].flatMap(UInt64.init) ?? 1
        static let seeds = (0..<UInt64(max(1, rounds))).map { firstSeed + $0 }

        @Test(arguments: seeds)
        func devicesSyncingThroughPostgreSQLKeepEveryInvariant(seed: UInt64) async throws {
            // Device folders in memory where the system has a tmpfs: their durable commits are
            // many, and what a kill tests is the process, not the disk.
            let memory = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
            let base =
                FileManager.default.isWritableFile(atPath: memory.path(percentEncoded: false))
                ? memory : FileManager.default.temporaryDirectory
            let root = base.appending(path: "ValueStoreSyncChaos-\(seed)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            try await PostgresServer.withClient { client in
                let table = try PostgresSyncTable(client: client, name: "chaos_\(seed)_\(PostgresServer.scratchName())")
                try await PostgresSyncChaosSchedule.persistently { try await table.createIfNeeded() }
                let schedule = PostgresSyncChaosSchedule(seed: seed, table: table, root: root)
                let start = ContinuousClock.now
                let problems: [String]
                do {
                    problems = try await schedule.run(steps: 100, budget: .seconds(30))
                } catch {
                    problems = ["the schedule stopped: \(error)"]
                }
                let report = (problems + ["schedule (\(ContinuousClock.now - start)):"] + schedule.log)
                    .joined(separator: "\n  ")
                #expect(problems.isEmpty, "seed \(seed) broke an invariant:\n  \(report)")
            }
        }
    }
}
#endif
