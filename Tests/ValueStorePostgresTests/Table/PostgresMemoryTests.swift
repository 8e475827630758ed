#if PostgreSQL
import Foundation
import Testing
import ValueStoreTestSupport

extension PostgresTests {
    /// What the store's calls leave in memory, measured as resident memory in a helper process
    /// of its own (`ValueStoreTestHelper postgres memory`), so no other test's work is counted.
    @Suite struct Memory {
        /// The resident memory of a helper before and after `count` loads made `way`, after a
        /// warm-up: killed, and `nil`, if it has not answered within 50 seconds (the suite gives each
        /// test a minute).
        static func residentMemory(table: String, count: Int, way: String) async throws -> (before: Int, after: Int)? {
            let helper = try HelperProcess("postgres", "memory", table, "\(count)", way)
            let pid = helper.process.processIdentifier
            let watchdog = Task {
                try await Task.sleep(for: .seconds(50))
                kill(pid, SIGKILL)
            }
            let line = await helper.nextLine()
            watchdog.cancel()
            #expect(await helper.exitStatus() == 0)
            let fields = line?.split(separator: " ") ?? []
            guard fields.count == 3, fields[0] == "rss", let before = Int(fields[1]), let after = Int(fields[2])
            else { return nil }
            return (before, after)
        }

        /// Before, they grew it by 40 MB: each call left its 30-second deadline timer behind, cancelled
        /// but kept until its time, and borrowed a connection, whose return postgres-nio's pool
        /// follows with a timer kept as long.
        @Test func twentyThousandFailingLoadsOnAMissingTableGrowResidentMemoryByLessThan20MB() async throws {
            let rss = try await Self.residentMemory(table: PostgresServer.scratchName(), count: 20_000, way: "missing")
            let measured = try #require(rss, "the helper answered within 50 seconds")
            let grown = measured.after - measured.before
            #expect(grown < 20 << 20, "resident memory grew by \(grown >> 10) KB over 20,000 failed loads")
        }
    }
}
#endif
