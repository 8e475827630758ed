#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreTesting

struct Flags: Codable, Equatable, Sendable {
    var newCheckout = false
    var banner: String?
}

struct Profile: Codable, Equatable, Sendable {
    var name: String
}

extension PostgresTests {
    @Suite struct ValueTable {
        @Test func theServerVariablesAreRequiredAndNamePgVirtualenv() throws {
            #expect {
                try PostgresServer.configuration(environment: [:])
            } throws: { error in
                "\(error)".contains("pg_virtualenv")
            }
        }

        @Test func everyKindOfStoreObeysTheLaws() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                try await ValueStoreLaws.check(table.dataStore("avatar"), samples: Data([1, 2, 3]), Data())
                try await ValueStoreLaws.check(
                    table.store("flags", as: Flags.self), samples: Flags(), Flags(newCheckout: true, banner: "hi"))
                try await ValueStoreLaws.check(
                    table.store(as: Profile.self), environment: "alice", samples: Profile(name: "Alice"),
                    Profile(name: "Al"))
                try await ValueStoreLaws.check(
                    table.store("cached", as: Int.self).cached(), samples: 1, 2)
            }
        }

        @Test func aMissingRowIsNotFoundAndTheEnvironmentIsTheKey() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let profiles = table.store(as: Profile.self)
                _ = try await profiles.save(Profile(name: "Alice"), "alice")
                #expect(try await profiles.load("alice") == Profile(name: "Alice"))
                await #expect(throws: ValueStoreError.notFound) { try await profiles.load("bob") }
            }
        }

        @Test func twoClientsReadEachOthersWrites() async throws {
            try await PostgresServer.withTwoTables { here, there in
                try await there.createIfNeeded()
                try await here.store("flags", as: Flags.self).save(Flags(newCheckout: true))
                #expect(try await there.store("flags", as: Flags.self).load() == Flags(newCheckout: true))
                let updated = try await there.store("flags", as: Flags.self).update { $0.banner = "sale" }
                #expect(updated.banner == "sale")
                #expect(try await here.store("flags", as: Flags.self).load() == updated)
                try await there.store("flags", as: Flags.self).remove()
                await #expect(throws: ValueStoreError.notFound) {
                    try await here.store("flags", as: Flags.self).load()
                }
            }
        }

        @Test func createIfNeededIsSafeFromManyClientsAtOnce() async throws {
            let name = PostgresServer.scratchName()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await PostgresServer.withClient { client in
                            try await PostgresValueTable(client: client, name: name).createIfNeeded()
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await PostgresServer.withClient { client in
                let table = try PostgresValueTable(client: client, name: name)
                try await table.createIfNeeded()
                try await table.dataStore("a").save(Data([1]))
                #expect(try await table.dataStore("a").load() == Data([1]))
            }
        }

        @Test func aMissingTableIsInvalidConfigurationNamingItAndCreateIfNeeded() async throws {
            try await PostgresServer.withClient { client in
                let name = PostgresServer.scratchName()
                let table = try PostgresValueTable(client: client, name: name)
                let flags = table.store("flags", as: Flags.self)
                for operation in [
                    { _ = try await flags.load() },
                    { _ = try await flags.default(Flags()).load() },
                    { try await flags.save(Flags()) },
                    { try await flags.remove() },
                    { _ = try await flags.update { $0.newCheckout = true } },
                ] as [@Sendable () async throws -> Void] {
                    let error = try await #require(throws: ValueStoreError.self) { try await operation() }
                    #expect(error.code == .invalidConfiguration)
                    #expect("\(error)".contains("'\(name)'") && "\(error)".contains("createIfNeeded()"), "\(error)")
                }
                // Statements are prepared once per connection, and postgres-nio keeps a failed
                // preparation: once the table exists, every operation works on the same connections.
                try await table.createIfNeeded()
                try await flags.save(Flags(banner: "made"))
                #expect(try await flags.load() == Flags(banner: "made"))
                #expect(try await flags.update { $0.newCheckout = true } == Flags(newCheckout: true, banner: "made"))
                try await flags.remove()
                await #expect(throws: ValueStoreError.notFound) { try await flags.load() }
            }
        }

        @Test func aConnectionThatLostItsStatementsPreparesThemAgain() async throws {
            try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { client in
                let table = try await PostgresServer.scratchTable(client)
                let flags = table.store("flags", as: Flags.self)
                try await flags.save(Flags(banner: "kept"))
                #expect(try await flags.load() == Flags(banner: "kept"))
                // The one connection forgets every prepared statement, as a pooler's reset does.
                try await PostgresServer.execute(client, "DEALLOCATE ALL")
                #expect(try await flags.load() == Flags(banner: "kept"))
                try await flags.save(Flags(banner: "again"))
                #expect(try await flags.load() == Flags(banner: "again"))
            }
        }

        @Test func aPreparationThatTimedOutIsNotKeptOnTheConnection() async throws {
            try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { client in
                try await PostgresServer.withClient { other in
                    let table = try await PostgresServer.scratchTable(client)
                    let flags = table.store("flags", as: Flags.self)
                    try await PostgresServer.execute(client, "SET lock_timeout = '100ms'")
                    // Another machine migrates the table: preparing a statement waits for its lock.
                    let logger = Logger(label: "tests")
                    try await other.withTransaction(logger: logger) { connection in
                        let lock: PostgresQuery = "LOCK TABLE \(unescaped: table.name) IN ACCESS EXCLUSIVE MODE"
                        _ = try await connection.query(lock, logger: logger)
                        await #expect(throws: ValueStoreError.self) { try await flags.load() }
                    }
                    await #expect(throws: ValueStoreError.notFound) { try await flags.load() }
                }
            }
        }

        @Test func aTableDroppedAndMadeAgainIsUsedAgain() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let flags = table.store("flags", as: Flags.self)
                try await flags.save(Flags(banner: "first"))
                try await PostgresServer.execute(client, "DROP TABLE \(unescaped: table.name)")
                let error = try await #require(throws: ValueStoreError.self) { try await flags.load() }
                #expect(error.code == .invalidConfiguration)
                try await table.createIfNeeded()
                await #expect(throws: ValueStoreError.notFound) { try await flags.load() }
                try await flags.save(Flags(banner: "second"))
                #expect(try await flags.load() == Flags(banner: "second"))
            }
        }

        @Test(arguments: [
            "", "1abc", "a.b.c", "a-b", "a b", "a\"b", "x; DROP TABLE y", "a.", ".a",
            String(repeating: "a", count: 64), "café",
        ])
        func aNameThatIsNotAnIdentifierThrowsAtOnce(name: String) async throws {
            try await PostgresServer.withClient { client in
                let error = try #require(throws: ValueStoreError.self) {
                    try PostgresValueTable(client: client, name: name)
                }
                #expect(error.code == .invalidConfiguration)
            }
        }

        @Test func schemaQualifiedAndLongestNamesWork() async throws {
            try await PostgresServer.withClient { client in
                try await PostgresServer.execute(client, "CREATE SCHEMA IF NOT EXISTS tenant_a")
                let long = "t" + String(PostgresServer.scratchName().dropFirst(5)) + String(repeating: "x", count: 50)
                for name in ["tenant_a.\(PostgresServer.scratchName())", String(long.prefix(63))] {
                    let table = try PostgresValueTable(client: client, name: name)
                    try await table.createIfNeeded()
                    try await ValueStoreLaws.check(table.store("k", as: Int.self), samples: 1, 2)
                }
            }
        }

        @Test func keysThatTrySQLInjectionAreJustKeys() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let keys = [
                    "'; DROP TABLE \(table.name); --", "\" OR 1=1 --", "$1", "\\", "key\u{0}", "ключ 🔑",
                    "a' || pg_sleep(1) || '",
                ]
                for key in keys where !key.contains("\u{0}") {
                    try await table.store(key, as: String.self).save(key)
                }
                for key in keys where !key.contains("\u{0}") {
                    #expect(try await table.store(key, as: String.self).load() == key)
                }
                let rows = try await PostgresServer.integer(
                    client, "SELECT count(*)::bigint FROM \(unescaped: table.name)")
                #expect(rows == keys.count - 1)
            }
        }

        @Test func damagedBytesAreReportedAndKept() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let damaged = [Data("not json".utf8), Data(#"{"newCheckout":"yes"}"#.utf8)]
                for (index, bytes) in damaged.enumerated() {
                    let key = "flags\(index)"
                    try await table.dataStore(key).save(bytes)
                    let flags = table.store(key, as: Flags.self)
                    await #expect(throws: ValueStoreError(.decodingFailed)) { try await flags.load() }
                    await #expect(throws: ValueStoreError(.decodingFailed)) {
                        try await flags.default(Flags()).load()
                    }
                    await #expect(throws: ValueStoreError(.decodingFailed)) {
                        try await flags.update { $0.newCheckout = true }
                    }
                    await #expect(throws: ValueStoreError(.decodingFailed)) {
                        try await flags.default(Flags()).update { $0.newCheckout = true }
                    }
                    let refused = await Task { @MainActor () -> ValueStoreError? in
                        let stored = StoredValue(flags, default: Flags())
                        await stored.reload()
                        do {
                            try await stored.update { $0.newCheckout = true }
                            return nil
                        } catch {
                            return error as? ValueStoreError
                        }
                    }.value
                    #expect(refused?.code == .decodingFailed, "StoredValue does not write over it")
                    #expect(try await table.dataStore(key).load() == bytes, "kept as it was")
                }
            }
        }

        @Test func anUpdateCancelledWhileItsBodyRunsWritesNothing() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let counter = table.store("counter", as: Int.self)
                try await counter.save(1)
                let (entered, enter) = AsyncStream.makeStream(of: Void.self)
                let (never, _) = AsyncStream.makeStream(of: Void.self)
                let updating = Task {
                    try await counter.update { value in
                        enter.yield()
                        for await _ in never {}  // ends only when the task is cancelled
                        value = 2
                    }
                }
                for await _ in entered { break }
                updating.cancel()
                await #expect(throws: CancellationError.self) { try await updating.value }
                #expect(try await counter.load() == 1)
            }
        }

        @Test func versionedRefusesNewerDataWrittenByAnotherMachine() async throws {
            struct NoteV1: VersionedValue, Equatable {
                static let version = 1
                var text: String
            }
            struct NoteV2: VersionedValue, Equatable {
                static let version = 2
                typealias PreviousVersion = NoteV1
                var text: String
                var pinned = false
                init(text: String, pinned: Bool = false) {
                    self.text = text
                    self.pinned = pinned
                }
                init(migrating old: NoteV1) { self.init(text: old.text) }
            }
            try await PostgresServer.withTwoClients { first, second in
                let name = PostgresServer.scratchName()
                let oldApp = try PostgresValueTable(client: first, name: name)
                let newApp = try PostgresValueTable(client: second, name: name)
                try await oldApp.createIfNeeded()
                try await oldApp.dataStore("note").versioned(NoteV1.self).save(NoteV1(text: "hello"))
                let migrated = try await newApp.dataStore("note").versioned(NoteV2.self).update { $0.pinned = true }
                #expect(migrated == NoteV2(text: "hello", pinned: true))
                let old = oldApp.dataStore("note").versioned(NoteV1.self)
                await #expect(throws: ValueStoreError.newerVersion) { try await old.load() }
                await #expect(throws: ValueStoreError.newerVersion) { try await old.save(NoteV1(text: "older")) }
                #expect(try await newApp.dataStore("note").versioned(NoteV2.self).load() == migrated)
            }
        }

        @Test func replacingCopyAndMoveWorkOverTheTable() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let old = ValueStore<Void, Int>.inMemory(7)
                let shared = table.store("count", as: Int.self).replacing(old)
                #expect(try await shared.load() == 7)
                #expect(try await shared.update { $0 += 1 } == 8)
                #expect(try await table.store("count", as: Int.self).load() == 8)

                let local = ValueStore<Void, Int>.inMemory(3)
                #expect(try await local.copy(to: table.store("copied", as: Int.self)) == 3)
                #expect(try await table.store("copied", as: Int.self).load() == 3)
                #expect(try await table.store("copied", as: Int.self).move(to: local) == 3)
                await #expect(throws: ValueStoreError.notFound) { try await table.store("copied", as: Int.self).load() }
            }
        }

        @Test func errorTextCarriesNoValueNorPassword() async throws {
            try await PostgresServer.withClient { client in
                let table = try await PostgresServer.scratchTable(client)
                let secret = "s3cr3t-value"
                try await table.dataStore("token").save(Data("{\"v\":\"\(secret)\"".utf8))
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("token", as: [String: String].self).load()
                }
                for text in ["\(error)", String(reflecting: error)] {
                    #expect(!text.contains(secret), "\(text)")
                }
            }
            let configuration = try PostgresServer.configuration(port: 1, password: "p4ssw0rd-in-config")
            try await PostgresServer.withClient(configuration: configuration) { client in
                var configured = try PostgresValueTable(client: client, name: "value_store")
                configured.connectTimeout = .milliseconds(500)
                let table = configured
                let error = try await #require(throws: ValueStoreError.self) { try await table.dataStore("k").load() }
                for text in ["\(error)", String(reflecting: error)] {
                    #expect(!text.contains("p4ssw0rd"), "\(text)")
                }
            }
        }
    }
}
#endif
