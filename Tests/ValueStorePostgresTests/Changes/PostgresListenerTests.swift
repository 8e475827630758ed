#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
@testable import ValueStorePostgres

extension PostgresTests {
    /// The listening connection proves it is alive, is replaced when it is not, and says why when
    /// it cannot listen at all; streams retry failed loads; an outage is one fast failure.
    @Suite struct Listener {
        /// A table of `name` through `client` whose listener proves itself every 200 ms, and
        /// whose reads give up a pooled connection that went silent after a second.
        static func table(_ client: PostgresClient, name: String) throws -> PostgresValueTable {
            var table = try PostgresValueTable(client: client, name: name)
            table.heartbeatInterval = .milliseconds(200)
            table.operationTimeout = .seconds(1)
            return table
        }

        /// A table of `name` through `client` whose listener proves itself every 2 s, and whose
        /// reads give up a pooled connection that went silent after a second.
        static func slowerTable(_ client: PostgresClient, name: String) throws -> PostgresValueTable {
            var table = try PostgresValueTable(client: client, name: name)
            table.heartbeatInterval = .seconds(2)
            table.operationTimeout = .seconds(1)
            return table
        }

        @Test func aListeningConnectionThatWentSilentIsFoundAndReplaced() async throws {
            try await TCPForwarder.withForwardedTable(maximumConnections: 4, table: Self.table) {
                forwarder, table, remote in
                let states = RecordedStates(table.store("count", as: Int.self).changes())
                defer { states.cancel() }
                let events = RecordedEvents(source: table.label)
                defer { events.stop() }
                #expect(await eventually { !states.states.isEmpty })
                try await remote.save(1)
                #expect(await eventually { states.values.contains(1) }, "listening")
                // The host of the listening connection crashes, or its virtual IP moves:
                // nothing arrives and nothing closes. New connections pass.
                forwarder.blackholeOpenConnections()
                try await remote.save(2)
                #expect(
                    await eventually(seconds: 10) { events.contains { $0.kind == .listeningAgain } },
                    "the core's event hook hears that it listens again: \(events.all)")
                #expect(
                    await eventually(seconds: 10) { states.values.contains(2) },
                    "a dead listening connection is found within two heartbeats and replaced: \(states.states)")
                try await remote.save(3)
                #expect(await eventually { states.values.contains(3) }, "listening again")
            }
        }

        /// Silence is measured from the last thing heard, so a notification that arrived just
        /// before the connection died does not buy it another heartbeat. The bound asserted is the
        /// one the guide states, twice `heartbeatInterval` (4 s here), with half a heartbeat to
        /// spare; measured from before that notification, it took three (6 s).
        @Test func aListenerThatWentSilentJustAfterANotificationIsFoundWithinTwoHeartbeats() async throws {
            try await TCPForwarder.withForwardedTable(maximumConnections: 4, table: Self.slowerTable) {
                forwarder, table, remote in
                let states = RecordedStates(table.store("count", as: Int.self).changes())
                defer { states.cancel() }
                // Following: its first heartbeat was just answered, and the next
                // heartbeat's wait has begun.
                #expect(await eventually { table.isFollowingChanges }, "listening")
                try await remote.save(1)
                #expect(await eventually { states.values.contains(1) }, "heard")
                forwarder.blackholeOpenConnections()
                let silent = ContinuousClock.now
                #expect(await eventually(seconds: 10) { !table.isFollowingChanges }, "found dead")
                let found = ContinuousClock.now - silent
                #expect(found < .seconds(5), "found \(found) after it went silent")
            }
        }

        @Test func aCacheServesNothingItsListenerCannotVouchFor() async throws {
            try await TCPForwarder.withForwardedTable(maximumConnections: 4, table: Self.table) {
                forwarder, table, remote in
                try await remote.save(1)
                let cached = table.store("count", as: Int.self).cached()
                #expect(
                    try await eventually {
                        _ = try await cached.load()
                        return try cached.loadImmediately?(()) == 1
                    }, "warm: answered from memory")
                forwarder.blackholeOpenConnections()
                try await remote.save(2)
                #expect(
                    try await eventually(seconds: 10) { try await cached.load() == 2 },
                    "once the listener is found dead, loads read the server")
            }
        }

        @Test func aFailedReloadIsTriedAgainUntilItSucceeds() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let states = RecordedStates(table.store("flags", as: Flags.self).changes())
                defer { states.cancel() }
                #expect(await eventually { states.states.first?.isAbsent == true })
                try await table.dataStore("flags").save(Data("{".utf8))
                #expect(await eventually { states.failures.first?.code == .decodingFailed })
                // Mended behind the store's back: no notification, no signal.
                let good = Data(#"{"newCheckout":true}"#.utf8)
                try await PostgresServer.execute(
                    client,
                    "UPDATE \(unescaped: table.name) SET value = \(ByteBuffer(bytes: good))::bytea WHERE key = 'flags'")
                #expect(
                    await eventually { states.values.contains(Flags(newCheckout: true)) },
                    "the failed reload is tried again until it succeeds")
            }
        }

        @Test func aPoolWithNoConnectionToSpareCannotListenAndSaysSo() async throws {
            try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { client in
                try await PostgresServer.withClient { there in
                    let table = try await PostgresServer.scratchTable(client)
                    let remote = try PostgresValueTable(client: there, name: table.name).store("count", as: Int.self)
                    let store = table.store("count", as: Int.self)
                    try await store.save(1)
                    let states = RecordedStates(store.changes())
                    defer { states.cancel() }
                    #expect(
                        await eventually {
                            states.failures.contains {
                                $0.code == .unavailable && "\($0)".contains("listen")
                                    && "\($0)".contains("maximumConnections 1")
                            }
                        }, "\(states.states)")
                    // The listener took nothing: the one connection still serves operations, and
                    // a cache reads the server since it cannot vouch for memory.
                    let cached = store.cached()
                    #expect(try await cached.load() == 1)
                    try await remote.save(2)
                    #expect(try await cached.load() == 2)
                }
            }
        }

        @Test func aStandbyCannotListenAndSaysSo() async throws {
            try await PostgresServer.withClient { primary in
                let table = try await PostgresServer.scratchTable(primary)
                try await table.store("count", as: Int.self).save(1)
                let standby = try await PostgresStandby.start()
                do {
                    try await PostgresServer.withClient(configuration: standby.configuration()) { client in
                        let onStandby = try PostgresValueTable(client: client, name: table.name)
                        let store = onStandby.store("count", as: Int.self)
                        #expect(await eventually { (try? await store.load()) == 1 }, "replicated")
                        let states = RecordedStates(store.changes())
                        defer { states.cancel() }
                        #expect(
                            await eventually {
                                states.failures.contains { $0.code == .unavailable && "\($0)".contains("standby") }
                            }, "\(states.states)")
                    }
                } catch {
                    try await standby.remove()
                    throw error
                }
                try await standby.remove()
            }
        }

        @Test func aPoolerThatLosesNotificationsIsReported() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                forwarder.dropsNotifications = true
                try await PostgresServer.withClient(configuration: forwarder.configuration(maximumConnections: 4)) {
                    client in
                    let table = try Self.table(client, name: PostgresServer.scratchName())
                    try await table.createIfNeeded()
                    let events = RecordedEvents(source: table.label)
                    defer { events.stop() }
                    let states = RecordedStates(table.store("count", as: Int.self).changes())
                    defer { states.cancel() }
                    #expect(
                        await eventually {
                            states.failures.contains { $0.code == .unavailable && "\($0)".contains("pooler") }
                        }, "\(states.states)")
                    #expect(
                        await eventually { events.contains { $0.kind == .cannotListen && $0.severity == .warning } },
                        "the core's event hook hears it, as a warning: \(events.all)")
                }
            }
        }

        @Test func afterTheClientStopsStreamsFailOrEndWithinTwoSeconds() async throws {
            let client = PostgresClient(configuration: try PostgresServer.configuration())
            let running = Task { await client.run() }
            let table = try await PostgresServer.scratchTable(client)
            let states = RecordedStates(table.store("count", as: Int.self).changes())
            defer { states.cancel() }
            #expect(await eventually { states.states.first?.isAbsent == true })
            #expect(await eventually { table.isFollowingChanges }, "listening")
            running.cancel()
            await running.value
            let stopped = ContinuousClock.now
            #expect(await eventually(seconds: 5) { states.ended || !states.failures.isEmpty })
            #expect(ContinuousClock.now - stopped < .seconds(2))
        }

        @Test func anOutageIsOneFastFailureAndTheValueReturnsAfterIt() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                try await PostgresServer.withClient(configuration: forwarder.configuration(maximumConnections: 4)) {
                    here in
                    try await PostgresServer.withClient { there in
                        let name = PostgresServer.scratchName()
                        var configured = try PostgresValueTable(client: here, name: name)
                        // A pooled connection the outage left silent rather than reset costs a
                        // statement's bound; the claim here is about refused connections.
                        configured.operationTimeout = .seconds(1)
                        let table = configured
                        try await table.createIfNeeded()
                        let store = table.store("count", as: Int.self)
                        try await store.save(1)
                        let states = RecordedStates(store.changes())
                        defer { states.cancel() }
                        #expect(await eventually { states.values.contains(1) })
                        #expect(await eventually { table.isFollowingChanges }, "listening")
                        // The server goes away: open connections are reset, new ones refused.
                        forwarder.mode = .refuse
                        forwarder.resetConnections()
                        let start = ContinuousClock.now
                        let refused = await #expect(throws: ValueStoreError.self) { try await store.load() }
                        #expect(refused?.code == .unavailable)
                        // The first call may find the pool's connections dead one by one (each
                        // within a second here), and wait for a new one while the listener still
                        // vouches for one, before it is refused: well under the old 10 s a call.
                        #expect(
                            ContinuousClock.now - start < .seconds(20),
                            "refused: unavailable; \(refused.map { "\($0)" } ?? "no error")")
                        #expect(await eventually { !states.failures.isEmpty }, "the stream hears of the outage")
                        try await Task.sleep(for: .seconds(3))
                        #expect(states.failures.count == 1, "one failure for the outage: \(states.states)")
                        #expect(states.failures.allSatisfy { $0.code == .unavailable })
                        forwarder.mode = .pass
                        let recovered = ContinuousClock.now
                        try await PostgresValueTable(client: there, name: name).store("count", as: Int.self).save(2)
                        #expect(await eventually(seconds: 15) { states.values.last == 2 })
                        #expect(ContinuousClock.now - recovered < .seconds(10), "the value within 10 s of recovery")
                    }
                }
            }
        }
    }
}
#endif
