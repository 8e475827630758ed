#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// A batch is one statement: it writes all of its changes or none, whether its body throws,
    /// the server refuses one change, or the caller cancels it in flight.
    @Suite struct Batch {
        @Test func aBatchThatThrowsWritesNothingAndOneThatCommitsWritesAll() async throws {
            struct Stop: Error {}
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                try await table.store("legacy", as: Int.self).save(1)
                await #expect(throws: Stop.self) {
                    try await table.batch { batch in
                        try batch.set(Flags(newCheckout: true), for: "flags")
                        batch.remove("legacy")
                        throw Stop()
                    }
                }
                await #expect(throws: ValueStoreError.notFound) {
                    try await table.store("flags", as: Flags.self).load()
                }
                #expect(try await table.store("legacy", as: Int.self).load() == 1)

                try await table.batch { batch in
                    try batch.set(Flags(), for: "flags")
                    batch.remove("legacy")
                    try batch.set(1, for: "count")
                    try batch.set(2, for: "count")
                    batch.remove("never-stored")
                }
                #expect(try await table.store("flags", as: Flags.self).load() == Flags())
                #expect(try await table.store("count", as: Int.self).load() == 2, "the last change to a key wins")
                await #expect(throws: ValueStoreError.notFound) { try await table.store("legacy", as: Int.self).load() }
            }
        }

        @Test func aBatchThatFailsOnTheServerWritesNothing() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                try await table.store("legacy", as: Int.self).save(1)
                // A key PostgreSQL's index refuses (random, so it does not compress) fails the statement.
                let tooLong = (0..<4_000).map { _ in String(UInt8.random(in: 0...35), radix: 36) }.joined()
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.batch { batch in
                        batch.remove("legacy")
                        try batch.set(1, for: tooLong)
                    }
                }
                #expect(error.code == .invalidConfiguration)
                #expect(try await table.store("legacy", as: Int.self).load() == 1)
            }
        }

        @Test func aBatchCancelledInFlightWritesAllOrNothing() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let keys = (0..<500).map { "key-\($0)" }
                let writing = Task {
                    try await table.batch { batch in
                        for key in keys {
                            try batch.set(Data(repeating: 7, count: 2_000), for: key)
                        }
                    }
                }
                writing.cancel()
                _ = await writing.result  // cancelled, written, or outcome unknown: any of them
                var found = 0
                for key in keys where (try? await table.dataStore(key).load()) != nil {
                    found += 1
                }
                #expect(found == 0 || found == keys.count, "one statement: \(found) of \(keys.count) written")
            }
        }
    }
}
#endif
