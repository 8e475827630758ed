#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization
import Testing
import ValueStore
import ValueStorePostgres

extension PostgresTests {
    /// What the table is: its resolved name, its shape, and what the server is asked to keep.
    @Suite struct TableShape {
        @Test func twoSpellingsOfOneTableTakeOneTurnPerKey() async throws {
            try await PostgresServer.withClient { client in
                let name = PostgresServer.scratchName()
                let plain = try PostgresValueTable(client: client, name: name)
                let qualified = try PostgresValueTable(client: client, name: "public.\(name)")
                try await plain.createIfNeeded()
                try await plain.store("k", as: Int.self).save(1)
                let runs = Mutex(0)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await plain.store("k", as: Int.self).update { value in
                        if runs.withLock({ runs in
                            runs += 1
                            return runs
                        }) == 1 {
                            try await qualified.store("k", as: Int.self).save(5)
                        }
                        value += 1
                    }
                }
                #expect(error.code == .nestedWrite, "\(error)")
                #expect(try await qualified.store("k", as: Int.self).load() == 1)
            }
        }

        @Test func twoSpellingsOfOneTableNotifyOnOneChannel() async throws {
            try await PostgresServer.withTwoClients { first, second in
                let name = PostgresServer.scratchName()
                let here = try PostgresValueTable(client: first, name: "public.\(name)")
                let there = try PostgresValueTable(client: second, name: name)
                try await here.createIfNeeded()
                try await there.createIfNeeded()
                let cached = here.store("count", as: Int.self).cached()
                try await cached.save(1)
                #expect(
                    try await eventually {
                        _ = try await cached.load()
                        return try cached.loadImmediately?(()) == 1
                    })
                try await there.store("count", as: Int.self).save(2)
                #expect(try await eventually { try await cached.load() == 2 })
            }
        }

        @Test func anUnquotedMixedCaseNameIsTheTableTheServerMeans() async throws {
            try await PostgresServer.withClient { client in
                let name = PostgresServer.scratchName()
                let mixed = try PostgresValueTable(client: client, name: "Mixed_\(name)")
                try await mixed.createIfNeeded()
                try await mixed.store("k", as: Int.self).save(3)
                // SQL written by hand, unquoted, reaches the same table.
                let rows = try await PostgresServer.integer(
                    client, "SELECT count(*)::bigint FROM Mixed_\(unescaped: name)")
                #expect(rows == 1)
                #expect(
                    try await PostgresValueTable(client: client, name: "mixed_\(name)").store("k", as: Int.self).load()
                        == 3)
            }
        }

        @Test(arguments: ["pg_catalog.values", "information_schema.values", "pg_toast.values", "PG_CATALOG.values"])
        func aSystemSchemaIsRefused(name: String) async throws {
            try await PostgresServer.withClient { client in
                let error = try #require(throws: ValueStoreError.self) {
                    try PostgresValueTable(client: client, name: name)
                }
                #expect(error.code == .invalidConfiguration)
            }
        }

        /// A temporary schema's rows live in one pooled session and vanish with it, so a value
        /// table or a sync server there would lose acknowledged saves: refused at once, like a
        /// system schema, in any case and with any backend number.
        @Test(arguments: [
            "pg_temp.values", "PG_TEMP.values", "Pg_Temp_3.values", "pg_temp_12.values", "pg_toast_temp_1.values",
        ])
        func aTemporarySchemaIsRefused(name: String) async throws {
            try await PostgresServer.withClient { client in
                let table = try #require(throws: ValueStoreError.self) {
                    try PostgresValueTable(client: client, name: name)
                }
                #expect(table.code == .invalidConfiguration)
                #expect("\(table)".contains("temporary"), "\(table)")
                let sync = try #require(throws: ValueStoreError.self) {
                    try PostgresSyncTable(client: client, name: name)
                }
                #expect(sync.code == .invalidConfiguration)
            }
        }

        @Test(arguments: [
            ("key text PRIMARY KEY, value text NOT NULL, version bigint NOT NULL, updated_at timestamptz", "value"),
            ("key text PRIMARY KEY, value bytea NOT NULL, version integer NOT NULL, updated_at timestamptz", "version"),
            ("key text PRIMARY KEY, value bytea NOT NULL, updated_at timestamptz", "version"),
            ("key text PRIMARY KEY, value bytea, version bigint, updated_at timestamptz, token text", "token"),
        ])
        func aTableOfAnotherShapeIsRefusedNamingTheColumn(columns: String, named column: String) async throws {
            try await PostgresServer.withClient { client in
                let name = PostgresServer.scratchName()
                try await PostgresServer.execute(client, "CREATE TABLE \(unescaped: name) (\(unescaped: columns))")
                let table = try PostgresValueTable(client: client, name: name)
                let error = try await #require(throws: ValueStoreError.self) { try await table.createIfNeeded() }
                #expect(error.code == .invalidConfiguration)
                #expect("\(error)".contains("'\(column)'"), "\(error)")
            }
        }

        @Test func aKeyThatIsNotThePrimaryKeyIsRefused() async throws {
            try await PostgresServer.withClient { client in
                let name = PostgresServer.scratchName()
                try await PostgresServer.execute(
                    client,
                    """
                    CREATE TABLE \(unescaped: name) (key text, value bytea NOT NULL, version bigint NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now())
                    """)
                let table = try PostgresValueTable(client: client, name: name)
                let error = try await #require(throws: ValueStoreError.self) { try await table.createIfNeeded() }
                #expect(error.code == .invalidConfiguration)
                #expect("\(error)".contains("'key'"), "\(error)")
            }
        }

        @Test func aNullValueIsCorruptedWithAReason() async throws {
            try await PostgresServer.withClient { client in
                let name = PostgresServer.scratchName()
                try await PostgresServer.execute(
                    client,
                    """
                    CREATE TABLE \(unescaped: name) (key text PRIMARY KEY, value bytea, version bigint NOT NULL,
                        updated_at timestamptz NOT NULL DEFAULT now(), token uuid NOT NULL DEFAULT gen_random_uuid())
                    """)
                try await PostgresServer.execute(
                    client, "INSERT INTO \(unescaped: name) (key, version) VALUES ('k', 1)")
                let table = try PostgresValueTable(client: client, name: name)
                try await table.createIfNeeded()
                for operation in [
                    { _ = try await table.dataStore("k").load() },
                    { _ = try await table.dataStore("k").update { $0.append(1) } },
                ] as [@Sendable () async throws -> Void] {
                    let error = try await #require(throws: ValueStoreError.self) { try await operation() }
                    #expect(error.code == .corrupted)
                    #expect("\(error)".contains("NULL"), "\(error)")
                }
            }
        }

        @Test func aRoleWithoutPrivilegesIsInvalidConfiguration() async throws {
            let role = "r_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let name = PostgresServer.scratchName()
            try await PostgresServer.withClient { client in
                try await PostgresValueTable(client: client, name: name).createIfNeeded()
                try await PostgresServer.execute(client, "CREATE ROLE \(unescaped: role) LOGIN PASSWORD 'p'")
            }
            var configuration = try PostgresServer.configuration(password: "p")
            configuration.username = role
            try await PostgresServer.withClient(configuration: configuration) { client in
                let table = try PostgresValueTable(client: client, name: name)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("k", as: Int.self).save(1)
                }
                #expect(error.code == .invalidConfiguration, "\(error)")
                #expect((error.underlyingError as? PostgresFailure)?.sqlState == "42501")
            }
        }

        @Test func aReadOnlyTransactionIsCalledOne() async throws {
            var configuration = try PostgresServer.configuration()
            configuration.options.additionalStartupParameters = [("default_transaction_read_only", "on")]
            let name = PostgresServer.scratchName()
            try await PostgresServer.withClient { client in
                try await PostgresValueTable(client: client, name: name).createIfNeeded()
            }
            try await PostgresServer.withClient(configuration: configuration) { client in
                let table = try PostgresValueTable(client: client, name: name)
                let error = try await #require(throws: ValueStoreError.self) {
                    try await table.store("k", as: Int.self).save(1)
                }
                #expect("\(error)".contains("read-only transaction"), "\(error)")
                #expect(!"\(error)".contains("is a read-only standby"), "\(error)")
            }
        }

        @Test(arguments: [("remote_apply", "remote_apply"), ("off", "on"), ("local", "on"), ("on", "on")])
        func writesRaiseAWeakerSynchronousCommitAndNeverLowerOne(server: String, write: String) async throws {
            var configuration = try PostgresServer.configuration()
            configuration.options.additionalStartupParameters = [("synchronous_commit", server)]
            try await PostgresServer.withClient(configuration: configuration) { client in
                let table = try await PostgresServer.scratchTable(client)
                let log = "\(table.name)_log"
                // A trigger records the setting each write's transaction commits with.
                try await PostgresServer.execute(client, "CREATE TABLE \(unescaped: log) (setting text)")
                try await PostgresServer.execute(
                    client,
                    """
                    CREATE FUNCTION \(unescaped: log)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        INSERT INTO \(unescaped: log) VALUES (current_setting('synchronous_commit'));
                        RETURN NULL;
                    END $$
                    """)
                try await PostgresServer.execute(
                    client,
                    """
                    CREATE TRIGGER \(unescaped: log) AFTER INSERT OR UPDATE OR DELETE ON \(unescaped: table.name)
                    FOR EACH ROW EXECUTE FUNCTION \(unescaped: log)()
                    """)
                let count = table.store("count", as: Int.self)
                try await count.save(1)
                _ = try await count.update { $0 += 1 }
                try await table.batch { try $0.set(3, for: "count") }
                try await count.remove()
                var settings: [String] = []
                for try await row in try await client.query("SELECT setting FROM \(unescaped: log)") {
                    settings.append(try row.decode(String.self))
                }
                #expect(settings == Array(repeating: write, count: 4))
            }
        }
    }
}
#endif
