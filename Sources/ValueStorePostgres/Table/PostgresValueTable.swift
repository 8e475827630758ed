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
/// The table has five columns: `key text PRIMARY KEY`, `value bytea NOT NULL`,
/// `version bigint NOT NULL` (1 on insert, one more on each write),
/// `updated_at timestamptz NOT NULL` and `token uuid NOT NULL` (random, new on every write).
///
/// - **Durable:** a save returns once the server committed it with `synchronous_commit = on`,
///   whatever the server's default.
/// - **Atomic update:** ``/ValueStore/ValueStore/update`` reads the row and its token, runs the body with
///   no lock and no transaction open on the server, and writes only if the row is still the one
///   it read (a token that never repeats for a key, across removes and failovers); otherwise it
///   reads again and runs the body again. Updates of one key in one process take
///   turns, so they never make each other start over, and a write to that key from inside the
///   body throws ``/ValueStore/ValueStoreError/Code/nestedWrite``.
/// - **Observed across machines:** each write sends a notification in the same statement, so it
///   is delivered at commit and never for a rollback. ``/ValueStore/ValueStore/changes()`` and
///   ``/ValueStore/ValueStore/cached()`` follow other machines' writes through one listening connection per
///   table and process.
///
/// The table never makes its own connections: it borrows them from the app's `PostgresClient`,
/// which the app runs. Observing a table holds one of the client's connections while any stream
/// is open, never the last one; that connection proves itself alive every ``heartbeatInterval``
/// it is quiet. While it cannot vouch that no change was missed, `cached()` reads the server, and
/// while it cannot listen at all (a standby, a transaction-mode pooler, no connection to spare)
/// the table's streams yield ``/ValueStore/StoredState/failed(_:)`` saying why.
///
/// > Important: A server that cannot be reached throws ``/ValueStore/ValueStoreError/Code/unavailable``
/// > after ``connectTimeout``, or after 2 seconds while none of the client's connections is known
/// > to be open; a connection lost after a write was sent throws
/// > ``/ValueStore/ValueStoreError/Code/outcomeUnknown``. Neither is ``/ValueStore/ValueStoreError/Code/notFound``, so
/// > `default` and `StoredValue` never hide them.
public struct PostgresValueTable: Sendable {
    /// The client whose connections the table borrows.
    public let client: PostgresClient

    /// The table's name, as given: `value_store` or `tenant.app_values`.
    public var name: String { table.name }

    /// How long an operation waits for a connection before it throws
    /// ``/ValueStore/ValueStoreError/Code/unavailable``; by default 10 seconds, as the client's own
    /// `connectTimeout`. Set it to the client's value. While none of the client's connections is
    /// known to be open (none was yet, or the last one was lost), the wait is at most 2 seconds:
    /// the pool keeps retrying a server that refuses at once, and an outage should not cost every
    /// call the whole timeout.
    ///
    /// ```swift
    /// var table = try PostgresValueTable(client: client)
    /// table.connectTimeout = .seconds(2)
    /// ```
    public var connectTimeout: Duration = .seconds(10)

    /// How long a statement may run once it has a connection; by default 30 seconds.
    ///
    /// ```swift
    /// var table = try PostgresValueTable(client: client)
    /// table.operationTimeout = .seconds(5)
    /// ```
    ///
    /// Past it, the operation throws (``/ValueStore/ValueStoreError/Code/unavailable`` for a read,
    /// ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` for a write, which may have committed),
    /// the server is asked to cancel the statement, and a connection whose statement does not end
    /// a second later is closed. `update`'s body is not counted: it runs between statements.
    public var operationTimeout: Duration = .seconds(30)

    /// How long a listening connection may hear nothing before it proves it is alive; by
    /// default 5 seconds.
    ///
    /// ```swift
    /// var table = try PostgresValueTable(client: client)
    /// table.heartbeatInterval = .seconds(2)
    /// ```
    ///
    /// A table observed by ``/ValueStore/ValueStore/changes()`` or ``/ValueStore/ValueStore/cached()``
    /// has one listening connection per process. Each time it has heard nothing for this long, it
    /// sends itself a notification through that connection, and waits this long again for it. A
    /// connection that died without a word (a crashed host, a partition, a moved virtual IP) is
    /// so found within twice this, closed, and replaced; streams then load again, and caches
    /// read the server until listening resumes. The first stream of a table in a process sets it
    /// for the table's listener.
    public var heartbeatInterval: Duration = .seconds(5)

    let table: PostgresTableName
    /// The table's use of ``client``: what is learned about reaching the server is kept under it.
    var clientUse: PostgresClientUse
    /// The name the table writes under, its use's: its client's listeners skip its notifications.
    var writer: String { PostgresChanges.writer(for: clientUse) }

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
        self.clientUse = PostgresClientUse(client)
    }

    /// What the table is, for error messages: `PostgreSQL table 'app_values'`.
    public var label: String { "PostgreSQL table '\(table.name)'" }

    /// Creates the table when it does not exist, and upgrades a table an earlier release made;
    /// safe to call from many processes at once.
    ///
    /// ```swift
    /// try await table.createIfNeeded()
    /// ```
    ///
    /// A table that exists keeps its rows. One the first release made gains the `token` column
    /// (filled for every row), which the server does under a lock on the table. Then the table's
    /// shape is checked, and its schema resolved once for this process, so every spelling of the
    /// name (`app_values` through the `search_path`, `public.app_values`) is one table with one
    /// channel. A schema-qualified name needs its schema to exist; the server needs PostgreSQL 13 or
    /// later (`gen_random_uuid()`).
    ///
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be reached;
    ///   ``/ValueStore/ValueStoreError/Code/invalidConfiguration`` naming the column when a table of
    ///   that name has another shape, when the role lacks a privilege (SQLSTATE `42501`), or when
    ///   the schema is missing.
    public func createIfNeeded() async throws {
        // Every process making or upgrading this table takes turns on one advisory lock.
        let lock = Int64(bitPattern: UInt64(PostgresKey.hash("valuestore:create:\(table.relation)"), radix: 16)!)
        let create = PostgresQuery(
            unsafeSQL: """
                DO $valuestore$
                BEGIN
                    PERFORM pg_advisory_xact_lock(\(lock));
                    IF to_regclass('\(table.quoted)') IS NULL THEN
                        CREATE TABLE IF NOT EXISTS \(table.quoted) (
                            key text PRIMARY KEY,
                            value bytea NOT NULL,
                            version bigint NOT NULL,
                            updated_at timestamptz NOT NULL DEFAULT now(),
                            token uuid NOT NULL DEFAULT gen_random_uuid()
                        );
                    END IF;
                END
                $valuestore$
                """)
        do {
            try await run(create)
        } catch let error as ValueStoreError
            where ["23505", "42P07"].contains((error.underlyingError as? PostgresFailure)?.sqlState)
        {
            // A process of the first release created it at the same moment, without the lock:
            // its CREATE committed first.
        }
        var found = try await resolve()
        if !found.hasToken {
            // Made by the first release, and of the right shape otherwise: add the token. The
            // server fills it for every row, and for rows that processes of the first release
            // insert later.
            try await run(
                PostgresQuery(
                    unsafeSQL: """
                        DO $valuestore$
                        BEGIN
                            PERFORM pg_advisory_xact_lock(\(lock));
                            IF NOT EXISTS (
                                SELECT FROM pg_attribute
                                WHERE attrelid = '\(table.quoted)'::regclass AND attname = 'token' AND NOT attisdropped
                            ) THEN
                                ALTER TABLE \(table.quoted) ADD COLUMN token uuid NOT NULL DEFAULT gen_random_uuid();
                            END IF;
                        END
                        $valuestore$
                        """))
            found = try await resolve()
        }
        PostgresResolvedTables.remember(found.table, for: spelling, client: client)
    }

    /// Runs a statement that returns nothing, unprepared.
    private func run(_ statement: PostgresQuery) async throws {
        try await connected(step: .read, store: label) { connection in
            for try await _ in try await connection.query(statement, logger: Self.logger) {}
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
            try PostgresKey.validate(key, store: label(key))
        }
        let table = try await resolvedTable()
        for key in keys {
            try OpenPostgresUpdate.refuseWrite(to: turn(key, in: table), store: label(key))
        }
        let identifiers = keys.map(PostgresKey.identifier)
        let present = keys.map { latest[$0]! != nil }
        let values = keys.map { ByteBuffer(bytes: latest[$0]! ?? Data()) }
        let statement: PostgresQuery = """
            WITH durable AS (SELECT \(unescaped: Self.durable)),
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
                INSERT INTO \(unescaped: table.quoted) AS stored (key, value, version, token)
                SELECT key, value, 1, gen_random_uuid() FROM input WHERE present
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = stored.version + 1,
                    token = excluded.token, updated_at = now()
                RETURNING stored.key, stored.version
            ),
            changed AS (SELECT * FROM removed UNION ALL SELECT * FROM written)
            SELECT changed.key FROM changed JOIN input USING (key) CROSS JOIN durable,
                LATERAL (SELECT pg_notify(\(table.channel)::text, changed.version || ' ' || \(writer)::text || ' ' || input.identifier)) AS notified
            """
        try await write(statement, table: table, store: label, keys: identifiers)
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
            changeSignals: { key in table.signals(PostgresKey.identifier(key)) }
        )
    }

    /// The signals of a key (a ``PostgresKey`` identifier) on the resolved table's channel. Before
    /// the table is resolved, the stream resolves it first, trying again until it can, and
    /// signals once when it starts following; until then, a feed of its own tells caches that
    /// it cannot vouch for anything (see ``/ValueStore/ChangeFeed``).
    func signals(_ key: String) -> AsyncStream<Void> {
        if let resolved = PostgresResolvedTables.lookUp(spelling, client: client) {
            return PostgresChanges.shared.signals(
                client: client, table: resolved, key: key, label: label, heartbeat: heartbeatInterval)
        }
        let table = self
        let resolving = ChangeFeed()
        resolving.record()
        return AsyncStream { continuation in
            let forwarding = Task {
                // Until the table is found (the server is back, createIfNeeded() made it), there
                // is nothing to follow; the stream's first signal after that reloads.
                var pause = Duration.milliseconds(50)
                var found = try? await table.resolvedTable()
                while found == nil, !Task.isCancelled {
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, .seconds(2))
                    found = try? await table.resolvedTable()
                }
                guard let resolved = found else { return continuation.finish() }
                // Records the listener's feed with the subscriber too: this task inherits its
                // recording.
                let signals = PostgresChanges.shared.signals(
                    client: table.client, table: resolved, key: key, label: table.label,
                    heartbeat: table.heartbeatInterval)
                resolving.follow()
                continuation.yield()
                for await signal in signals {
                    continuation.yield(signal)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in forwarding.cancel() }
        }
    }

    /// Whether this process listens to the table now, with a live connection; for tests.
    var isFollowingChanges: Bool {
        guard let resolved = PostgresResolvedTables.lookUp(spelling, client: client) else { return false }
        return PostgresChanges.shared.isFollowing(client: client, table: resolved)
    }

    /// Sets `synchronous_commit` for the statement's own transaction: raised to `on` from anything
    /// weaker, and left as it is when the server or role asks for `remote_apply`.
    static let durable =
        "set_config('synchronous_commit', CASE current_setting('synchronous_commit') "
        + "WHEN 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)"

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
