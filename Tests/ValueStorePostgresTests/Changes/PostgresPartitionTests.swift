#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
@testable import ValueStorePostgres

extension PostgresTests {
    /// After a partition that killed every open connection without a word, a stream hears what
    /// changed within twice ``PostgresValueTable/heartbeatInterval`` and 2 seconds, and a read
    /// waits for no dead connection: the pool's idle connections, dead too, are closed once the
    /// listening connection is proved dead, instead of being lent for a whole
    /// ``PostgresValueTable/operationTimeout`` each.
    @Suite struct Partition {
        static let heartbeat = Duration.seconds(1)
        /// Long, so that a read on a dead connection cannot pass for a bounded one.
        static let operationTimeout = Duration.seconds(15)
        static let connectTimeout = Duration.seconds(2)
        /// What a loaded two-core machine adds to the bounds asserted.
        static let slack = Duration.seconds(2)

        static func table(_ client: PostgresClient, name: String) throws -> PostgresValueTable {
            var table = try PostgresValueTable(client: client, name: name)
            table.heartbeatInterval = heartbeat
            table.operationTimeout = operationTimeout
            table.connectTimeout = connectTimeout
            return table
        }

        /// Runs loads from many tasks at once until the pool holds `connections` (the listening
        /// one among them), all borrowed by the store; `false` if it never does.
        static func fill(
            _ forwarder: TCPForwarder,
            to connections: Int,
            loading store: ValueStore<Void, Int>
        ) async throws -> Bool {
            for _ in 0..<50 where forwarder.openConnections < connections {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<40 {
                        group.addTask { _ = try await store.load() }
                    }
                    try await group.waitForAll()
                }
            }
            return forwarder.openConnections >= connections
        }

        /// Runs `body` with a stream of a table through a forwarder whose pool holds idle
        /// connections besides the listening one, and a store of the same row through a client
        /// of its own that the partition does not reach.
        static func withPartitionedTable(
            _ body:
                @Sendable (
                    _ forwarder: TCPForwarder, _ table: PostgresValueTable, _ states: RecordedStates<Int>,
                    _ remote: ValueStore<Void, Int>
                ) async throws -> Void
        ) async throws {
            try await TCPForwarder.withForwardedTable(maximumConnections: 8, table: Self.table) {
                forwarder, table, remote in
                try await remote.save(1)
                let states = RecordedStates(table.store("count", as: Int.self).changes())
                defer { states.cancel() }
                #expect(await eventually { table.isFollowingChanges }, "listening")
                #expect(await eventually { states.values.contains(1) })
                let filled = try await fill(forwarder, to: 5, loading: table.store("count", as: Int.self))
                try #require(filled, "the pool holds idle connections: \(forwarder.openConnections) open")
                // Lets the connections the pool was still opening finish: one cut in the middle
                // of its start-up hangs for the client's connectTimeout (5 s here), which is
                // the pool's to bound, not the store's.
                try await Task.sleep(for: .milliseconds(500))
                try await body(forwarder, table, states, remote)
            }
        }

        /// Before, the stream's reload borrowed an idle connection that died in the partition
        /// and waited the whole `operationTimeout` (15 s here) on it: about 17 s.
        @Test func aChangeMadeDuringAPartitionReachesAStreamWithinTwoHeartbeatsAndTwoSeconds() async throws {
            try await Self.withPartitionedTable { forwarder, _, states, remote in
                // Every open connection dies without a word (a partition long enough for the
                // server to drop them, a crashed host, a moved virtual IP); new ones pass.
                forwarder.blackholeOpenConnections()
                let healed = ContinuousClock.now
                try await remote.save(2)
                #expect(await eventually(seconds: 40) { states.values.contains(2) }, "\(states.states)")
                let reached = ContinuousClock.now - healed
                let target = Self.heartbeat * 2 + .seconds(2)
                #expect(reached < target + Self.slack, "reached the stream \(reached) after the heal; target \(target)")
            }
        }

        /// Reads started as soon as the listener is proved dead, before it is replaced, wait for
        /// no dead connection (nor do reads started later). Before, each borrowed one of the idle
        /// connections that died in the partition and threw `unavailable` after the whole
        /// `operationTimeout`, 15 s here.
        @Test func aReadStartedOnceTheListenerIsProvedDeadEndsWithinConnectTimeoutAndARoundTrip() async throws {
            try await Self.withPartitionedTable { forwarder, table, _, _ in
                forwarder.blackholeOpenConnections()
                #expect(await eventually(seconds: 10) { !table.isFollowingChanges }, "proved dead")
                let store = table.store("count", as: Int.self)
                // As many reads at once as the pool had idle connections.
                let reads = await withTaskGroup(of: (Duration, Int?).self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            let start = ContinuousClock.now
                            let value = try? await store.load()
                            return (ContinuousClock.now - start, value)
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                let target = Self.connectTimeout + .seconds(1)
                #expect(
                    reads.allSatisfy { $0.0 < target + Self.slack },
                    "reads took \(reads.map(\.0)); target \(target), a connect timeout and a round trip")
                #expect(reads.allSatisfy { $0.1 == 1 }, "each read the value: \(reads.map(\.1))")
            }
        }
    }
}
#endif
