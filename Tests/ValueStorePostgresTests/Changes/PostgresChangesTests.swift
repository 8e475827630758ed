#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    @Suite struct Changes {
        @Test func changesFollowAnotherMachinesSavesAndRemoves() async throws {
            try await PostgresServer.withTwoTables { here, there in
                var states = here.store("flags", as: Flags.self).changes().makeAsyncIterator()
                #expect(await states.next()?.isAbsent == true)
                let remote = there.store("flags", as: Flags.self)
                try await remote.save(Flags(newCheckout: true))
                #expect(await states.next(where: { !$0.isAbsent })?.value == Flags(newCheckout: true))
                try await remote.save(Flags(banner: "sale"))
                #expect(
                    await states.next(where: { $0.value != Flags(newCheckout: true) })?.value == Flags(banner: "sale"))
                try await remote.remove()
                #expect(await states.next(where: { $0.isAbsent }) != nil)
            }
        }

        @Test func aKeyedStoreFollowsTheKeyItsEnvironmentNames() async throws {
            try await PostgresServer.withTwoTables { here, there in
                let profiles = here.store(as: Profile.self)
                var alice = profiles.changes(environment: "alice").makeAsyncIterator()
                #expect(await alice.next()?.isAbsent == true)
                _ = try await there.store(as: Profile.self).save(Profile(name: "Bob"), "bob")
                _ = try await there.store(as: Profile.self).save(Profile(name: "Alice"), "alice")
                #expect(await alice.next(where: { !$0.isAbsent })?.value == Profile(name: "Alice"))
            }
        }

        @Test func cachedDropsItsValueWhenAnotherMachineWrites() async throws {
            try await PostgresServer.withTwoTables { here, there in
                let cached = here.store("count", as: Int.self).cached()
                try await cached.save(1)
                // Warm: it answers without the server. (Listening for the first time reloads
                // every key once, which may empty it right after the save.)
                #expect(
                    try await eventually {
                        _ = try await cached.load()
                        return try cached.loadImmediately?(()) == 1
                    })
                try await there.store("count", as: Int.self).save(2)
                #expect(try await eventually { try await cached.load() == 2 })
                try await there.store("count", as: Int.self).remove()
                #expect(
                    await eventually {
                        do {
                            _ = try await cached.load()
                            return false
                        } catch {
                            return error as? ValueStoreError == .notFound
                        }
                    })
            }
        }

        @Test func aLongKeyIsObservedThroughItsHash() async throws {
            try await PostgresServer.withTwoTables { here, there in
                // Random, so the index compresses nothing: beyond the 1,000 bytes a key travels as.
                let key = (0..<2_000).map { _ in String(UInt8.random(in: 0...35), radix: 36) }.joined()
                var states = here.store(key, as: Int.self).changes().makeAsyncIterator()
                #expect(await states.next()?.isAbsent == true)
                try await there.store(key, as: Int.self).save(5)
                #expect(await states.next(where: { !$0.isAbsent })?.value == 5)
            }
        }

        @Test func oneListeningConnectionPerTableHoweverManyStreams() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let other = try await PostgresServer.scratchTable(client)
                let streams = [
                    table.store("a", as: Int.self).changes(), table.store("a", as: Int.self).changes(),
                    table.store("b", as: Int.self).changes(), other.store("a", as: Int.self).changes(),
                ]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for stream in streams {
                        group.addTask {
                            for await _ in stream {}
                        }
                    }
                    let listening = {
                        try await PostgresServer.integer(
                            client,
                            """
                            SELECT count(*)::bigint FROM pg_stat_activity
                            WHERE pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query LIKE '%valuestore listening on%') AND (query LIKE \("%" + table.name + "%") OR query LIKE \("%" + other.name + "%"))
                            """)
                    }
                    #expect(try await eventually { try await listening() == 2 })
                    try await Task.sleep(for: .milliseconds(100))
                    #expect(try await listening() == 2, "one connection for each of the two tables")
                    group.cancelAll()
                }
            }
        }

        @Test func changesStillArriveAfterTheListeningConnectionIsTerminated() async throws {
            try await PostgresServer.withTwoClients { first, second in
                let name = PostgresServer.scratchName()
                let here = try PostgresValueTable(client: first, name: name)
                let there = try PostgresValueTable(client: second, name: name).store("count", as: Int.self)
                try await here.createIfNeeded()
                var states = here.store("count", as: Int.self).changes().makeAsyncIterator()
                #expect(await states.next()?.isAbsent == true)
                try await there.save(1)
                #expect(await states.next(where: { !$0.isAbsent })?.value == 1, "listening")

                let terminated = try await PostgresServer.integer(
                    second,
                    """
                    SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity
                    WHERE pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query LIKE '%valuestore listening on%') AND query LIKE \("%" + name + "%")
                    """)
                #expect(terminated == 1)
                // Written while the listener reconnects: the reconnection's reload finds it.
                try await there.save(2)
                #expect(await states.next(where: { $0.value == 2 })?.value == 2)
                // Written after it listens again: the notification brings it.
                #expect(
                    try await eventually {
                        try await PostgresServer.integer(
                            second,
                            """
                            SELECT count(*)::bigint FROM pg_stat_activity
                            WHERE pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query LIKE '%valuestore listening on%') AND query LIKE \("%" + name + "%")
                            """) == 1
                    })
                try await there.save(3)
                #expect(await states.next(where: { $0.value == 3 })?.value == 3)
            }
        }
    }
}
#endif
