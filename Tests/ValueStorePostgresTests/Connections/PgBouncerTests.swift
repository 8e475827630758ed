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
            let bouncer = try await PgBouncer.start(poolMode: "transaction", serverConnections: 2)
            defer { Task { try? await bouncer.stop() } }
            try await PostgresServer.withClient { direct in
                let table = try await PostgresServer.scratchTable(direct)
                try await PostgresServer.withClient(configuration: bouncer.configuration(maximumConnections: 8)) {
                    client in
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
        }

        @Test func streamsThroughATransactionModePoolerSayTheyCannotFollowChanges() async throws {
            let bouncer = try await PgBouncer.start(poolMode: "transaction", serverConnections: 2)
            defer { Task { try? await bouncer.stop() } }
            try await PostgresServer.withClient { direct in
                let table = try await PostgresServer.scratchTable(direct)
                try await PostgresServer.withClient(configuration: bouncer.configuration(maximumConnections: 4)) {
                    client in
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
}
#endif
