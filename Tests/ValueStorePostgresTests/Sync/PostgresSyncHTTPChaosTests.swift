#if PostgreSQL && Configuration && Hummingbird
import Foundation
import PostgresNIO
import Testing
import ValueStorePostgres

extension PostgresTests {
    /// The chaos schedules of ``PostgresSyncChaosTests`` in their HTTP mode: the device processes
    /// sync over HTTP with two `valuestore-sync-server` processes on the schedule's tables, each
    /// device through a forwarder of its own, while servers are killed (`kill -9`) or terminated
    /// and started again, forwarders partition (blackhole, refuse, reset) or drop the servers'
    /// answers, the first tokens expire, a token of one account is used for the other, and the
    /// database is restarted, restored and given a new epoch; then the same checker.
    /// `VALUESTORE_SYNC_HTTP_CHAOS_ROUNDS` sets how many schedules run (two by default, each about
    /// 35 s on two cores; seeds 1 to 10 passed in a row before it ran by default), and
    /// `VALUESTORE_SYNC_HTTP_CHAOS_SEED` the first seed. Each prints its seed as it starts, and a failure shows its seed and schedule:
    /// `VALUESTORE_SYNC_HTTP_CHAOS_ROUNDS=1 VALUESTORE_SYNC_HTTP_CHAOS_SEED=<seed>` plays its
    /// steps again.
    @Suite struct PostgresSyncHTTPChaosTests {
        static let environment = ProcessInfo.processInfo.environment
        static let rounds = environment["VALUESTORE_SYNC_HTTP_CHAOS_ROUNDS"].flatMap(Int.init) ?? 2
        static let firstSeed = environment["VALUESTORE_SYNC_HTTP_CHAOS_SEED"].flatMap(UInt64.init) ?? 1
        static let seeds = (0..<UInt64(max(1, rounds))).map { firstSeed + $0 }

        @Test(arguments: seeds)
        func devicesSyncingOverHTTPThroughTwoServersKeepEveryInvariant(seed: UInt64) async throws {
            print("PostgresSyncHTTPChaosTests: seed \(seed) (VALUESTORE_SYNC_HTTP_CHAOS_SEED=\(seed) plays it again)")
            let memory = URL(filePath: "/dev/shm", directoryHint: .isDirectory)
            let base =
                FileManager.default.isWritableFile(atPath: memory.path(percentEncoded: false))
                ? memory : FileManager.default.temporaryDirectory
            let root = base.appending(path: "ValueStoreSyncHTTPChaos-\(seed)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            try await PostgresServer.withClient { client in
                let table = try PostgresSyncTable(
                    client: client, name: "http_chaos_\(seed)_\(PostgresServer.scratchName())")
                try await PostgresSyncChaosSchedule.persistently { try await table.createIfNeeded() }
                let servers = try await ChaosSyncServers(
                    table: table.name, root: root, accounts: ["alice", "bob"],
                    lifetime: PostgresSyncChaosSchedule.firstTokensLifetime)
                let schedule = PostgresSyncChaosSchedule(seed: seed, table: table, root: root)
                schedule.servers = servers
                let start = ContinuousClock.now
                let problems: [String]
                do {
                    problems = try await schedule.run(steps: 60, budget: .seconds(20))
                } catch {
                    problems = ["the schedule stopped: \(error)"]
                }
                await servers.stop()
                let report = (problems + ["schedule (\(ContinuousClock.now - start)):"] + schedule.log)
                    .joined(separator: "\n  ")
                #expect(problems.isEmpty, "seed \(seed) broke an invariant over HTTP:\n  \(report)")
            }
        }
    }
}
#endif
