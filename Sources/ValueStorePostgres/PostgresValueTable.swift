#if PostgreSQL
public import Foundation
public import PostgresNIO
public import ValueStore

/// A PostgreSQL table of values, shared by every process and machine that uses it: one value per
/// key, an atomic `update` across machines, and changes that reach every observer.
///
/// ```swift
/// let table = try PostgresValueTable(client: client, name: "app_values")  // the app runs `client`
/// try await table.createIfNeeded()            // idempotent, safe from many processes at once
/// let flags = table.store("flags", as: Flags.self)      // ValueStore<Void, Flags>, JSON bytes
/// let avatar = table.dataStore("avatar")                // ValueStore<Void, Data>, bytes as given
/// let profiles = table.store(as: Profile.self)          // ValueStore<String, Profile>: the environment is the key
/// ```
///
/// The table has four columns: `key text PRIMARY KEY`, `value bytea NOT NULL`,
/// `version bigint NOT NULL` (1 on insert, one more on each write) and
/// `updated_at timestamptz NOT NULL`.
///
/// - **Durable:** a save returns once the server committed it with `synchronous_commit = on`,
///   whatever the server's default.
/// - **Atomic update:** ``/ValueStore/ValueStore/update`` reads the row and its version, runs the body with
///   no lock and no transaction open on the server, and writes only if the version is unchanged;
///   otherwise it reads again and runs the body again. Updates of one key in one process take
///   turns, so they never make each other start over, and a write to that key from inside the
///   body throws ``/ValueStore/ValueStoreError/Code/nestedWrite``.
/// - **Observed across machines:** each write sends a notification in the same statement, so it
///   is delivered at commit and never for a rollback. ``/ValueStore/ValueStore/changes()`` and
///   ``/ValueStore/ValueStore/cached()`` follow other machines' writes through one listening connection per
///   table and process.
///
/// The table never makes its own connections: it borrows them from the app's `PostgresClient`,
/// which the app runs. Observing a table holds one of the client's connections while any stream
/// is open.
///
/// > Important: A server that cannot be reached throws ``/ValueStore/ValueStoreError/Code/unavailable``
/// > after ``connectTimeout``; a connection lost after a write was sent throws
/// > ``/ValueStore/ValueStoreError/Code/outcomeUnknown``. Neither is ``/ValueStore/ValueStoreError/Code/notFound``, so
/// > `default` and `StoredValue` never hide them.
public struct PostgresValueTable: Sendable {
    /// The client whose connections the table borrows.
    public let client: PostgresClient

    /// The table's name, as given: `value_store` or `tenant.app_values`.
    public var name: String { table.name }

    /// How long an operation waits for a connection before it throws
    /// ``/ValueStore/ValueStoreError/Code/unavailable``; by default 10 seconds, as the client's own
    /// `connectTimeout`. Set it to the client's value.
    ///
    /// ```swift
    /// var table = try PostgresValueTable(client: client)
    /// table.connectTimeout = .seconds(2)
    /// ```
    public var connectTimeout: Duration = .seconds(10)

    let table: PostgresTableName
    let writer: String

    /// A table of values reached through `client`.
    ///
    /// ```swift
    /// let table = try PostgresValueTable(client: client, name: "app_values")
    /// ```
    ///
    /// - Parameters:
    ///   - client: The app's client, which the app runs (`client.run()` in a task).
    ///   - name: A plain or schema-qualified identifier: letters, digits and underscores, not
    ///     starting with a digit, at most 63 bytes a part.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/invalidConfiguration`` for any other name, at once.
    public init(client: PostgresClient, name: String = "value_store") throws {
        self.client = client
        self.table = try PostgresTableName(name)
        self.writer = PostgresChanges.writer(for: client)
    }

    /// What the table is, for error messages: `PostgreSQL table 'app_values'`.
    public var label: String { "PostgreSQL table '\(table.name)'" }

    /// Creates the table when it does not exist; safe to call from many processes at once.
    ///
    /// ```swift
    /// try await table.createIfNeeded()
    /// ```
    ///
    /// A table that exists is left as it is. A schema-qualified name needs its schema to exist.
    ///
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be reached, or the
    ///   server's refusal (such as a missing schema or privilege).
    public func createIfNeeded() async throws {
        let statement = PostgresQuery(
            unsafeSQL: """
                CREATE TABLE IF NOT EXISTS \(table.quoted) (
                    key text PRIMARY KEY,
                    value bytea NOT NULL,
                    version bigint NOT NULL,
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """)
        do {
            try await connected(step: .read, store: label) { connection in
                for try await _ in try await connection.query(statement, logger: Self.logger) {}
            }
        } catch let error as ValueStoreError
            where ["23505", "42P07"].contains((error.underlyingError as? PostgresFailure)?.sqlState)
        {
            // Another process created it at the same moment: its CREATE committed first.
        }
    }

    /// A store of one key's value, encoded as JSON.
    ///
    /// ```swift
    /// let flags = table.store("flags", as: Flags.self)
    /// ```
    ///
    /// Stored bytes that do not decode as `Value` throw ``/ValueStore/ValueStoreError/Code/decodingFailed``,
    /// and `update`, `default` and `StoredValue` never write over them.
    ///
    /// - Parameters:
    ///   - key: The row's key.
    ///   - type: The value's type.
    /// - Returns: A store whose `update` is atomic across machines.
    public func store<Value: Codable & Sendable>(_ key: String, as type: Value.Type = Value.self)
        -> ValueStore<Void, Value>
    {
        var store = keyedDataStore().coded(Self.json(Value.self)).provide(key)
        store.label = label(key)
        return store
    }

    /// A store of one key's bytes, stored as given.
    ///
    /// ```swift
    /// let avatar = table.dataStore("avatar")
    /// ```
    ///
    /// - Parameter key: The row's key.
    /// - Returns: A store whose `update` is atomic across machines.
    public func dataStore(_ key: String) -> ValueStore<Void, Data> {
        var store = keyedDataStore().provide(key)
        store.label = label(key)
        return store
    }

    /// A store of many values of one type, encoded as JSON: the environment is the key.
    ///
    /// ```swift
    /// let profiles = table.store(as: Profile.self)
    /// let alice = try await profiles.load("alice")
    /// ```
    ///
    /// - Parameter type: The values' type.
    /// - Returns: A store whose environment is the row's key.
    public func store<Value: Codable & Sendable>(as type: Value.Type = Value.self) -> ValueStore<String, Value> {
        keyedDataStore().coded(Self.json(Value.self))
    }

    /// Changes several keys in one transaction: all of them or none.
    ///
    /// ```swift
    /// try await table.batch { batch in
    ///     try batch.set(Flags(), for: "flags")
    ///     batch.remove("legacy")
    /// }
    /// ```
    ///
    /// `body` collects the changes; if it throws, nothing is written. The last change to a key
    /// wins. The changes are written in one statement, which notifies each changed key at commit.
    ///
    /// - Parameter body: Sets and removes keys on the batch.
    /// - Throws: `body`'s error, ``/ValueStore/ValueStoreError/Code/unavailable``, or
    ///   ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` when the connection was lost after the batch was
    ///   sent.
    public func batch(_ body: (_ batch: inout PostgresBatch) throws -> Void) async throws {
        var batch = PostgresBatch()
        try body(&batch)
        var latest: [String: Data?] = [:]
        var order: [String] = []
        for (key, value) in batch.changes {
            if latest.updateValue(value, forKey: key) == nil {
                order.append(key)
            }
        }
        guard !order.isEmpty else { return }
        let keys = order
        for key in keys {
            try OpenPostgresUpdate.refuseWrite(to: turn(key), store: label(key))
        }
        let identifiers = keys.map(PostgresKey.identifier)
        let present = keys.map { latest[$0]! != nil }
        let values = keys.map { ByteBuffer(bytes: latest[$0]! ?? Data()) }
        let statement: PostgresQuery = """
            WITH durable AS (SELECT set_config('synchronous_commit', 'on', true)),
            input AS (
                SELECT * FROM unnest(\(keys)::text[], \(values)::bytea[], \(present)::bool[], \(identifiers)::text[])
                    AS input(key, value, present, identifier)
            ),
            removed AS (
                DELETE FROM \(unescaped: table.quoted) AS stored USING input
                WHERE stored.key = input.key AND NOT input.present
                RETURNING stored.key, stored.version + 1 AS version
            ),
            written AS (
                INSERT INTO \(unescaped: table.quoted) AS stored (key, value, version)
                SELECT key, value, 1 FROM input WHERE present
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = stored.version + 1, updated_at = now()
                RETURNING stored.key, stored.version
            ),
            changed AS (SELECT * FROM removed UNION ALL SELECT * FROM written)
            SELECT changed.key FROM changed JOIN input USING (key) CROSS JOIN durable,
                LATERAL (SELECT pg_notify(\(table.channel)::text, changed.version || ' ' || \(writer)::text || ' ' || input.identifier)) AS notified
            """
        try await write(statement, store: label, keys: identifiers)
    }

    /// The store every other is built on: bytes by key.
    func keyedDataStore() -> ValueStore<String, Data> {
        let table = self
        return ValueStore<String, Data>(
            label: label,
            load: { key in try await table.load(key) },
            save: { value, key in
                try await table.save(value, for: key)
                return value
            },
            remove: { key in try await table.remove(key) },
            update: { key, body in try await table.update(key, body) },
            changeSignals: { key in
                PostgresChanges.shared.signals(
                    client: table.client, table: table.table, key: PostgresKey.identifier(key))
            }
        )
    }

    /// The JSON codec, reporting any bytes that do not decode as ``/ValueStore/ValueStoreError/Code/decodingFailed``:
    /// a row is written whole or not at all, so bytes that do not decode were written by another
    /// program or version, never torn.
    static func json<Value: Codable & Sendable>(_: Value.Type) -> Codec<Value, Data> {
        let json = Codec<Value, Data>.json
        return Codec(
            to: json.to,
            from: { data in
                do {
                    return try json.from(data)
                } catch let error as ValueStoreError where error.code == .corrupted {
                    var error = error
                    error.code = .decodingFailed
                    throw error
                }
            })
    }

    static let logger = Logger(label: "ValueStorePostgres")
}
#endif
