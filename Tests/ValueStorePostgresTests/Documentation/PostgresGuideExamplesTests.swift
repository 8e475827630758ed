#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreSync

// The code Documentation/PostgreSQL.md and the README show, compiled and run here (the
// documentation tests check that every Swift block of the guides appears in a test).

extension PostgresTests {
    @Suite struct GuideExamples {
        @Test func theTour() async throws {
            try await PostgresServer.withClient { client in
                try await PostgresServer.execute(client, "DROP TABLE IF EXISTS app_values")
                let table = try PostgresValueTable(client: client, name: "app_values")  // the app runs `client`
                try await table.createIfNeeded()  // idempotent, safe from many processes at once
                let flags = table.store("flags", as: Flags.self)  // ValueStore<Void, Flags>, JSON bytes
                let avatar = table.dataStore("avatar")  // ValueStore<Void, Data>, bytes as given
                let profiles = table.store(as: Profile.self)  // ValueStore<String, Profile>: the environment is the key
                try await table.batch { batch in  // one transaction: all or nothing
                    try batch.set(Flags(), for: "flags")
                    batch.remove("legacy")
                }

                #expect(try await flags.load() == Flags())
                try await avatar.save(Data([0xFF]))
                _ = try await profiles.save(Profile(name: "Alice"), "alice")
                #expect(try await profiles.load("alice").name == "Alice")
            }
        }

        @Test func aSyncServer() async throws {
            let folder = FileManager.default.temporaryDirectory.appending(path: "sync-guide-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            try await PostgresServer.withClient { client in
                let account = SyncAccount(id: "user-42")
                let syncFolder = folder
                let name = PostgresServer.scratchName()

                let table = try PostgresSyncTable(client: client, name: name)
                try await table.createIfNeeded()  // safe from many processes at once
                let remote = table.remote(for: account)  // a trusted process talks to PostgreSQL directly
                let replica = try SyncReplica(directory: syncFolder, account: account, remote: remote)
                try await table.collectTombstones(olderThan: .seconds(30 * 86_400))
                let lostOnServer = try await table.archivedConflicts(for: account)

                try await replica.store("theme", as: String.self).save("dark")
                try await replica.syncNow()
                #expect(lostOnServer.isEmpty)
                try await table.startNewEpoch(for: account)  // a deliberate reset
                try await replica.syncNow()
                #expect(try await replica.store("theme", as: String.self).load() == "dark")
            }
        }

        @Test func settingUpAClient() async throws {
            let configuration = try PostgresServer.configuration()
            let logger = Logger(label: "app")
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }  // the app runs the client for as long as it uses it

                let table = try PostgresValueTable(client: client, name: "app_values")
                try await table.createIfNeeded()
                let flags = table.store("flags", as: Flags.self).default(Flags())

                _ = try await flags.update { $0.newCheckout = true }  // atomic across machines
                for await state in flags.changes() {  // follows every machine's writes
                    print(state)
                    break
                }

                group.cancelAll()
            }
        }

        @Test func handlingFailures() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let flags = table.store("flags", as: Flags.self)
                var current = Flags()
                var needsRetry = false
                do {
                    try await flags.save(Flags(newCheckout: true))
                } catch let error as ValueStoreError where error.code == .unavailable {
                    needsRetry = true  // not saved: nothing happened; retry later
                } catch let error as ValueStoreError where error.code == .outcomeUnknown {
                    current = try await flags.load()  // it may have happened: load to find out
                }
                #expect(current == Flags() && !needsRetry)
                // Neither failure branch ran: the save landed.
                #expect(try await flags.load() == Flags(newCheckout: true))
            }
        }

        @Test func anUnreachableServerIsUnavailableInBoundedTimeNeverHiddenByADefault() async throws {
            // Nothing listens on port 1: every connection is refused.
            var configuration = try PostgresServer.configuration(port: 1)
            configuration.options.connectTimeout = .seconds(1)
            try await PostgresServer.withClient(configuration: configuration) { client in
                var configured = try PostgresValueTable(client: client)
                configured.connectTimeout = .seconds(1)
                let table = configured
                let flags = table.store("flags", as: Flags.self)
                for operation in [
                    { _ = try await flags.load() },
                    { _ = try await flags.default(Flags()).load() },
                    { try await flags.save(Flags()) },
                    { _ = try await flags.update { $0.newCheckout = true } },
                    { try await table.createIfNeeded() },
                ] as [@Sendable () async throws -> Void] {
                    await #expect(throws: ValueStoreError(.unavailable)) { try await operation() }
                }
            }
        }
    }
}
#endif
