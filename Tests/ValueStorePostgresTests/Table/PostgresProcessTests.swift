#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStoreTestSupport
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// Several processes, a killed client and a crashed server, against one table.
    @Suite struct Processes {
        @Test func fourProcessesUpdatingAnAbsentKeyCountEveryUpdate() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let helpers = try (0..<4).map { _ in
                    try HelperProcess("postgres", "increment", table.name, "counter", "100")
                }
                for helper in helpers {
                    #expect(await helper.exitStatus() == 0)
                    #expect(helper.lines() == ["done"])
                }
                #expect(try await table.store("counter", as: Int.self).load() == 400)
            }
        }

        @Test func aClientKilledInTheMiddleOfUpdatesLeavesNothingLocked() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let helper = try HelperProcess("postgres", "update-loop", table.name, "counter")
                for _ in 0..<20 {
                    _ = await helper.nextLine()
                }
                helper.kill()
                // The server notices the closed socket; nothing it held stays held.
                #expect(
                    try await eventually {
                        try await PostgresServer.integer(
                            client,
                            """
                            SELECT count(*)::bigint FROM pg_locks JOIN pg_class ON pg_class.oid = pg_locks.relation
                            WHERE pg_class.relname = \(table.name) AND pg_locks.pid <> pg_backend_pid()
                            """) == 0
                    })
                try await PostgresServer.execute(client, "SET lock_timeout = '1s'")
                let before = try await table.store("counter", as: Int.self).load()
                #expect(try await table.store("counter", as: Int.self).update { $0 += 1 } == before + 1)
                #expect(
                    try await PostgresServer.integer(
                        client, "SELECT count(*)::bigint FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'")
                        == 0)
            }
        }

        @Test func anImmediateRestartLosesNoAcknowledgedSaveAndStreamsResume() async throws {
            try await PostgresServer.withTwoClients { first, second in
                // An operator's `off` must not weaken the store's saves: its own transactions set
                // `synchronous_commit = on`. The long WAL writer delay makes a lost commit likely.
                try await PostgresServer.execute(first, "ALTER SYSTEM SET synchronous_commit = off")
                try await PostgresServer.execute(first, "ALTER SYSTEM SET wal_writer_delay = '10s'")
                try await PostgresServer.execute(first, "SELECT pg_reload_conf()")
                let table = try await PostgresServer.scratchTable(first)
                let watcher = try PostgresValueTable(client: second, name: table.name).store("sequence", as: Int.self)
                var states = watcher.changes().makeAsyncIterator()
                #expect(await states.next()?.isAbsent == true)

                let store = table.store("sequence", as: Int.self)
                var acknowledged = 0
                for sequence in 1...200 {
                    try await store.save(sequence)
                    acknowledged = sequence
                }
                try await PostgresServer.restartImmediately()
                var survived: Int?
                #expect(
                    await eventually {
                        survived = try? await store.load()
                        return survived != nil
                    })
                #expect(try #require(survived) >= acknowledged, "no acknowledged save is lost")
                try await PostgresServer.execute(first, "ALTER SYSTEM RESET synchronous_commit")
                try await PostgresServer.execute(first, "ALTER SYSTEM RESET wal_writer_delay")
                try await PostgresServer.execute(first, "SELECT pg_reload_conf()")

                // The stream opened before the restart follows writes made after it.
                try await store.save(1_000)
                #expect(await states.next(where: { $0.value == 1_000 })?.value == 1_000)
            }
        }
    }
}
#endif
