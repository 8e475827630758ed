#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// Behind a real PgBouncer in transaction mode (Debian's 1.18, without prepared-statement
    /// support): every call still works, and streams say they cannot follow changes.
    @Suite struct ThroughPgBouncer {
        @Test func concurrentCallsThroughATransactionModePoolerAllSucceed() async throws {
            try await PgBouncer.withScratchTable(poolMode: "transaction", maximumConnections: 8) {
                _, _, table, client in
                let pooled = try PostgresValueTable(client: client, name: table.name)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<8 {
                        group.addTask {
                            let store = pooled.store("key-\(task % 3)", as: Int.self)
                            for round in 0..<20 {
                                try await store.save(round)
                                _ = try await store.load()
                                _ = try await store.update { $0 += 1 }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let counter = pooled.store("counter", as: Int.self)
                try await counter.save(0)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            for _ in 0..<10 { _ = try await counter.update { $0 += 1 } }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await counter.load() == 40, "updates through the pooler stay exact")
            }
        }

        /// A transaction-mode pooler lends the server connection that answered the store's
        /// `pg_backend_pid()` to whoever asks next: cancelling by that pid would cancel another
        /// client's statement, never the store's own. The store closes its connection instead.
        @Test func aWritePastItsTimeoutThroughATransactionModePoolerNeverCancelsAnotherClientsStatement()
            async throws
        {
            try await PgBouncer.withScratchTable(poolMode: "transaction", serverConnections: 3, maximumConnections: 2) {
                bouncer, direct, table, client in
                try await PostgresServer.withClient(configuration: bouncer.configuration(maximumConnections: 1)) {
                    other in
                    var configured = try PostgresValueTable(client: client, name: table.name)
                    configured.operationTimeout = .milliseconds(500)
                    let count = configured.store("count", as: Int.self)
                    // The store's connection runs on the pooler's one server connection so far.
                    try await count.save(1)
                    // Another client of the pooler gets that server connection next.
                    let sleeping = Task { try await PostgresServer.execute(other, "SELECT pg_sleep(3)") }
                    #expect(
                        try await eventually {
                            try await PostgresServer.integer(
                                direct,
                                "SELECT count(*)::bigint FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3)' AND state = 'active'"
                            ) == 1
                        })
                    // The store's next write waits on a row lock, on the other server connection.
                    let (locked, hasLocked) = AsyncStream.makeStream(of: Void.self)
                    let (released, release) = AsyncStream.makeStream(of: Void.self)
                    let holding = Task {
                        try await direct.withTransaction(logger: Logger(label: "tests")) { connection in
                            for try await _ in try await connection.query(
                                "SELECT key FROM \(unescaped: table.name) WHERE key = 'count' FOR UPDATE",
                                logger: Logger(label: "tests")
                            ) {}
                            hasLocked.yield()
                            for await _ in released {}
                        }
                    }
                    for await _ in locked { break }
                    let error = await #expect(throws: ValueStoreError.self) { try await count.save(2) }
                    #expect(error?.code == .outcomeUnknown, "\(error.map { "\($0)" } ?? "")")
                    release.finish()
                    try await holding.value
                    await #expect(throws: Never.self, "another client's statement was cancelled") {
                        try await sleeping.value
                    }
                }
            }
        }

        @Test func streamsThroughATransactionModePoolerSayTheyCannotFollowChanges() async throws {
            try await PgBouncer.withScratchTable(poolMode: "transaction", maximumConnections: 4) {
                _, _, table, client in
                var pooled = try PostgresValueTable(client: client, name: table.name)
                pooled.heartbeatInterval = .milliseconds(200)
                let store = pooled.store("count", as: Int.self)
                try await store.save(1)
                let states = RecordedStates(store.changes())
                defer { states.cancel() }
                #expect(
                    await eventually {
                        states.failures.contains { $0.code == .unavailable && "\($0)".contains("pooler") }
                    }, "\(states.states)")
                let cached = store.cached()
                #expect(try await cached.load() == 1)
                try await table.store("count", as: Int.self).save(2)
                #expect(try await cached.load() == 2, "a cache that cannot follow reads the server")
            }
        }
    }
}
#endif
