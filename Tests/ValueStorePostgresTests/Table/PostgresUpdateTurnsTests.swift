#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization
import Testing
import ValueStore
import ValueStorePostgres

/// How many times a body ran.
private final class Runs: Sendable {
    let count = Atomic<Int>(0)
}

extension PostgresTests {
    @Suite struct UpdateTurns {
        @Test func eightTasksOfOneProcessUpdatingOneKeyRunEachBodyOnce() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let counter = table.store("counter", as: Int.self)
                try await counter.save(0)
                let bodies = Runs()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            _ = try await counter.update { value in
                                bodies.count.add(1, ordering: .relaxed)
                                value += 1
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await counter.load() == 8)
                #expect(bodies.count.load(ordering: .relaxed) == 8, "no update of this process made another start over")
            }
        }

        @Test func aWriteToTheSameKeyFromInsideTheBodyThrowsAtOnce() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let counter = table.store("counter", as: Int.self)
                try await counter.save(1)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await counter.update { value in
                        try await counter.save(5)
                        value = 2
                    }
                }
                #expect(error.code == .nestedWrite)
                await #expect(throws: ValueStoreError.self) {
                    try await counter.update { _ in
                        try await table.batch { try $0.set(5, for: "counter") }
                    }
                }
                #expect(try await counter.load() == 1)
                // Another key, and the same key once the update is over, are written as usual.
                _ = try await counter.update { value in
                    try await table.store("other", as: Int.self).save(3)
                    value = 2
                }
                try await counter.save(4)
                #expect(try await counter.load() == 4)
                #expect(try await table.store("other", as: Int.self).load() == 3)
            }
        }

        @Test func anUpdateCancelledWhileWaitingForItsTurnLeavesTheQueue() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let counter = table.store("counter", as: Int.self)
                try await counter.save(0)
                let (entered, enter) = AsyncStream.makeStream(of: Void.self)
                let (release, released) = AsyncStream.makeStream(of: Void.self)
                let first = Task {
                    try await counter.update { value in
                        enter.yield()
                        for await _ in release { break }
                        value = 1
                    }
                }
                for await _ in entered { break }
                let waiting = Task { try await counter.update { $0 = 100 } }
                waiting.cancel()
                await #expect(throws: CancellationError.self) { try await waiting.value }
                released.yield()
                #expect(try await first.value == 1)
                #expect(try await counter.update { $0 += 1 } == 2)
            }
        }
    }
}
#endif
