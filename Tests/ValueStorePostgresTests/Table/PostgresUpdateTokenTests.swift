#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// `update` writes only over the row its body read: a token that never repeats for a key.
    @Suite struct UpdateToken {
        @Test func anUpdateInFlightDoesNotOverwriteAValueRemovedAndSavedAgain() async throws {
            try await PostgresServer.withTwoTables { here, there in
                let counter = here.store("counter", as: Int.self)
                try await counter.save(1)
                let runs = Mutex(0)
                let updated = try await counter.update { value in
                    let run = runs.withLock { runs in
                        runs += 1
                        return runs
                    }
                    if run == 1 {
                        // Another machine removes the key and saves it again: the version starts
                        // over at 1, the version this body read.
                        try await there.store("counter", as: Int.self).remove()
                        try await there.store("counter", as: Int.self).save(100)
                    }
                    value += 1
                }
                #expect(updated == 101)
                #expect(try await counter.load() == 101, "the other machine's save is not lost")
                #expect(runs.withLock { $0 } == 2, "the body ran again over the new row")
            }
        }

        @Test func anUpdateInFlightDoesNotOverwriteWhatAPromotedStandbyAcknowledged() async throws {
            try await PostgresServer.withClient { primary in
                let table = try await PostgresServer.scratchTable(primary)
                try await table.store("counter", as: Int.self).save(1)
                let standby = try await PostgresStandby.start()
                defer { Task { try? await standby.remove() } }
                // Asynchronous replication falls behind: versions 2 and 3 reach the primary only.
                try await standby.stop()
                try await table.store("counter", as: Int.self).save(2)
                try await table.store("counter", as: Int.self).save(3)
                try await TCPForwarder.withForwarder { forwarder in
                    // One connection, so the one a failover breaks is the one replaced.
                    let configuration = try forwarder.configuration(maximumConnections: 1)
                    try await PostgresServer.withClient(configuration: configuration) { client in
                        let counter = try PostgresValueTable(client: client, name: table.name)
                            .store("counter", as: Int.self)
                        let runs = Mutex(0)
                        let updated = try await counter.update { value in
                            let run = runs.withLock { runs in
                                runs += 1
                                return runs
                            }
                            if run == 1 {
                                // The primary is lost; the standby is promoted with version 1 and
                                // acknowledges two saves, which take versions 2 and 3 again.
                                try await standby.startAsPrimary()
                                try await PostgresServer.withClient(configuration: standby.configuration()) { new in
                                    let there = try PostgresValueTable(client: new, name: table.name)
                                    try await there.store("counter", as: Int.self).save(10)
                                    try await there.store("counter", as: Int.self).save(20)
                                }
                                // The virtual IP moves to the new primary.
                                forwarder.upstream = .tcp(host: "localhost", port: standby.port)
                                forwarder.resetConnections()
                                #expect(try await counter.load() == 20, "reads reach the new primary")
                            }
                            value += 1
                        }
                        #expect(updated == 21, "the body ran again over the row the new primary holds")
                        #expect(try await counter.load() == 21, "the promoted standby's acknowledged save is kept")
                        #expect(runs.withLock { $0 } == 2)
                    }
                }
            }
        }

        @Test func anUpdateInFlightDoesNotOverwriteABatchThatRemovedAndSavedAgain() async throws {
            try await PostgresServer.withTwoTables { here, there in
                let counter = here.store("counter", as: Int.self)
                try await counter.save(1)
                let runs = Mutex(0)
                let updated = try await counter.update { value in
                    if runs.withLock({ runs in
                        runs += 1
                        return runs
                    }) == 1 {
                        try await there.batch { $0.remove("counter") }
                        try await there.batch { try $0.set(100, for: "counter") }
                    }
                    value += 1
                }
                #expect(updated == 101)
                #expect(try await counter.load() == 101)
            }
        }

        @Test func createIfNeededUpgradesATableOfTheFirstReleaseFromManyClientsAtOnce() async throws {
            let name = PostgresServer.scratchName()
            try await PostgresServer.withClient { client in
                // The shape the first release made, with a row it wrote.
                try await PostgresServer.execute(
                    client,
                    """
                    CREATE TABLE \(unescaped: name) (
                        key text PRIMARY KEY,
                        value bytea NOT NULL,
                        version bigint NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
                try await PostgresServer.execute(
                    client,
                    "INSERT INTO \(unescaped: name) (key, value, version) VALUES ('count', convert_to('5', 'UTF8'), 1)")
                // Before the upgrade, the table says what to do.
                let table = try PostgresValueTable(client: client, name: name)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("count", as: Int.self).load()
                }
                #expect(error.code == .invalidConfiguration)
                #expect("\(error)".contains("createIfNeeded()"), "\(error)")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await PostgresServer.withClient { client in
                            let table = try PostgresValueTable(client: client, name: name)
                            try await withThrowingTaskGroup(of: Void.self) { tasks in
                                for _ in 0..<2 {
                                    tasks.addTask { try await table.createIfNeeded() }
                                }
                                try await tasks.waitForAll()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await PostgresServer.withClient { client in
                let columns = try await PostgresServer.integer(
                    client,
                    """
                    SELECT count(*)::bigint FROM information_schema.columns
                    WHERE table_name = \(name) AND column_name = 'token' AND data_type = 'uuid'
                    """)
                #expect(columns == 1)
                let table = try PostgresValueTable(client: client, name: name)
                let count = table.store("count", as: Int.self)
                #expect(try await count.load() == 5, "the first release's row is kept")
                #expect(try await count.update { $0 += 1 } == 6)
                // A row that a process of the first release inserts gets a token too.
                try await PostgresServer.execute(
                    client,
                    "INSERT INTO \(unescaped: name) (key, value, version) VALUES ('old', convert_to('7', 'UTF8'), 1)")
                #expect(try await table.store("old", as: Int.self).update { $0 += 1 } == 8)
            }
        }
    }
}
#endif
