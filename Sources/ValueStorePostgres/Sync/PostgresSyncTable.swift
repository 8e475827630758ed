#if PostgreSQL
import Foundation
public import PostgresNIO
import ValueStore
public import ValueStoreSync

/// A sync server on PostgreSQL: every account's synced values, shared by every device of the
/// account, through the tables of one name.
///
/// ```swift
/// let table = try PostgresSyncTable(client: client, name: "sync")   // the app runs `client`
/// try await table.createIfNeeded()
/// let replica = try SyncReplica(directory: folder, account: account, remote: table.remote(for: account))
/// try await table.collectTombstones(olderThan: .seconds(30 * 86_400))
/// ```
///
/// It makes five tables, named after `name`: `NAME_accounts` (each account's epoch, head and
/// horizon), `NAME_records` (each key's newest record, by account), `NAME_pushes` (the
/// idempotency entry of each author and key), `NAME_replicas` (each replica's cursor and the
/// newest version it was given) and `NAME_archive` (every loser, until resolved). It decides
/// exactly as `InMemorySyncServer` does (the same rules, run in Swift on the
/// rows a request involves):
///
/// - **A push is one atomic write**: the changes, their records, their idempotency entries, the
///   losers they archive and the new head commit together in one statement, with
///   `synchronous_commit = on` (or the server's `remote_apply`), or not at all. It reads in one
///   snapshot and writes only if the account's row is still the version it read (every push
///   rewrites the row); when another push came in between it answers again, and after three
///   tries it reads under the row's lock. A push repeated after a lost answer has each effect
///   once.
/// - **Versions are commit-ordered**: each write takes the account's head plus one while it holds
///   the account row's lock, so a version commits only after every lower one, and a pull reads
///   the head and the records in one snapshot: a cursor never skips a row that committed late.
/// - **Pokes** are notifications on the records table's channel, delivered at commit, through the
///   same listening connection (and heartbeat) as ``PostgresValueTable``'s changes; a push's
///   poke names the pushing replica and the head it reached, so that replica need not pull
///   after its own push.
/// - **The server's clock** is the database's (`clock_timestamp()`), merged by every replica from
///   every answer; stamps more than ``maximumClockAhead`` ahead of it are refused.
///
/// > Important: A device talks to PostgreSQL directly here, which suits a trusted process (a
/// > server app syncing on a user's behalf, tests, tools). An app on a user's device needs a
/// > transport that authenticates the user and passes only their account's requests; every request
/// > and response is `Codable` for that.
public struct PostgresSyncTable: Sendable {
    /// The client whose connections the table borrows.
    public var client: PostgresClient { records.client }

    /// The tables' common name, as given: `sync` or `tenant.sync`.
    public let name: String

    /// How far ahead of the server's clock a stamp may be: by default 60 seconds.
    ///
    /// ```swift
    /// var table = try PostgresSyncTable(client: client, name: "sync")
    /// table.maximumClockAhead = .seconds(10)
    /// ```
    public var maximumClockAhead: Duration = .seconds(60)

    /// How long a request waits for a connection; as ``PostgresValueTable/connectTimeout``.
    ///
    /// ```swift
    /// var table = try PostgresSyncTable(client: client, name: "sync")
    /// table.connectTimeout = .seconds(2)
    /// ```
    public var connectTimeout: Duration {
        get { records.connectTimeout }
        set { records.connectTimeout = newValue }
    }

    /// How long a request's transaction may run once it has a connection; as
    /// ``PostgresValueTable/operationTimeout``.
    ///
    /// ```swift
    /// var table = try PostgresSyncTable(client: client, name: "sync")
    /// table.operationTimeout = .seconds(5)
    /// ```
    public var operationTimeout: Duration {
        get { records.operationTimeout }
        set { records.operationTimeout = newValue }
    }

    /// How soon a dead listening connection behind the pokes is found (twice this); as
    /// ``PostgresValueTable/heartbeatInterval``.
    ///
    /// ```swift
    /// var table = try PostgresSyncTable(client: client, name: "sync")
    /// table.heartbeatInterval = .seconds(2)
    /// ```
    public var heartbeatInterval: Duration {
        get { records.heartbeatInterval }
        set { records.heartbeatInterval = newValue }
    }

    /// The records table, whose connection handling (bounded waits and statements, cancellation,
    /// error classification) and channel every request uses.
    var records: PostgresValueTable
    /// `NAME_accounts`: each account's epoch, head and horizon.
    let accounts: PostgresTableName
    /// `NAME_pushes`: the idempotency entry of each author and key.
    let pushes: PostgresTableName
    /// `NAME_replicas`: each replica's cursor and the newest version it was given.
    let replicas: PostgresTableName
    /// `NAME_archive`: every loser, until resolved.
    let archive: PostgresTableName
    /// What this value's last push of each account left, for its next push.
    let pushMemory: PostgresPushMemory

    /// A sync server in the tables named after `name`, reached through `client`.
    ///
    /// ```swift
    /// let table = try PostgresSyncTable(client: client, name: "sync")
    /// ```
    ///
    /// - Parameters:
    ///   - client: The app's client, which the app runs (`client.run()` in a task).
    ///   - name: A plain or schema-qualified identifier whose last part leaves room for the
    ///     suffix `_accounts` within 63 bytes.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/invalidConfiguration`` for any other name, at once.
    public init(client: PostgresClient, name: String = "sync") throws {
        self.name = name
        pushMemory = PostgresPushMemory()
        records = try PostgresValueTable(client: client, name: "\(name)_records")
        accounts = try PostgresTableName("\(name)_accounts")
        pushes = try PostgresTableName("\(name)_pushes")
        replicas = try PostgresTableName("\(name)_replicas")
        archive = try PostgresTableName("\(name)_archive")
    }

    /// What the tables are, for error messages: `PostgreSQL sync table 'sync'`.
    public var label: String { "PostgreSQL sync table '\(name)'" }

    /// Creates the tables that do not exist; safe to call from many processes at once.
    ///
    /// ```swift
    /// try await table.createIfNeeded()
    /// ```
    ///
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be
    ///   reached; ``/ValueStore/ValueStoreError/Code/invalidConfiguration`` when the role lacks a
    ///   privilege or the schema is missing.
    public func createIfNeeded() async throws {
        let lock = Int64(
            bitPattern: UInt64(PostgresKey.hash("valuestore:create:\(records.table.relation)"), radix: 16)!)
        let statement = PostgresQuery(
            unsafeSQL: """
                DO $valuestore$
                BEGIN
                    PERFORM pg_advisory_xact_lock(\(lock));
                    CREATE TABLE IF NOT EXISTS \(accounts.quoted) (
                        account text PRIMARY KEY, epoch uuid NOT NULL, head bigint NOT NULL, horizon bigint NOT NULL
                    );
                    CREATE TABLE IF NOT EXISTS \(records.table.quoted) (
                        account text NOT NULL, key text NOT NULL, version bigint NOT NULL,
                        removal boolean NOT NULL, stamp_ms bigint NOT NULL, record bytea NOT NULL,
                        PRIMARY KEY (account, key)
                    );
                    CREATE INDEX IF NOT EXISTS \(records.table.relation)_by_version
                        ON \(records.table.quoted) (account, version);
                    CREATE TABLE IF NOT EXISTS \(pushes.quoted) (
                        account text NOT NULL, author text NOT NULL, key text NOT NULL, entry bytea NOT NULL,
                        PRIMARY KEY (account, author, key)
                    );
                    CREATE TABLE IF NOT EXISTS \(replicas.quoted) (
                        account text NOT NULL, replica text NOT NULL, cursor bigint NOT NULL, seen bigint NOT NULL,
                        PRIMARY KEY (account, replica)
                    );
                    CREATE TABLE IF NOT EXISTS \(archive.quoted) (
                        account text NOT NULL, id bigserial NOT NULL, version bigint NOT NULL, writer text NOT NULL,
                        pulled boolean NOT NULL, conflict bytea NOT NULL, PRIMARY KEY (account, id)
                    );
                END
                $valuestore$
                """)
        try await transaction(step: .read) { connection in
            try await connection.run(statement)
        }
        _ = try await resolvedRecords()
    }

    /// The remote of `account`'s replicas: requests run as transactions on this table's tables.
    ///
    /// ```swift
    /// let replica = try SyncReplica(directory: folder, account: account, remote: table.remote(for: account))
    /// ```
    ///
    /// - Parameter account: The account whose requests it carries; a request for another
    ///   account throws ``/ValueStore/ValueStoreError/Code/invalidConfiguration``.
    /// - Returns: A remote whose pokes follow the account's pushes from every process.
    public func remote(for account: SyncAccount) -> SyncRemote {
        let table = self
        return SyncRemote(
            label: "\(label), account \(PostgresKey.quoted(account.id))",
            push: { request in
                try table.check(request.account, is: account)
                return try await table.push(request)
            },
            pull: { request in
                try table.check(request.account, is: account)
                return try await table.pull(request)
            },
            authoredPokes: { table.pokes(of: account.id) }
        )
    }

    /// Deletes removals that every replica of their account has pulled and whose stamp is older
    /// than `age`, moving each account's horizon past them; a replica whose cursor is below the
    /// horizon then pulls everything before it pushes.
    ///
    /// ```swift
    /// try await table.collectTombstones(olderThan: .seconds(30 * 86_400))
    /// ```
    ///
    /// - Parameter age: How old a removal's stamp must be, by the server's clock.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be
    ///   reached; ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` when the connection was lost
    ///   after the statement was sent.
    public func collectTombstones(olderThan age: Duration) async throws {
        let milliseconds = age.components.seconds * 1_000 + age.components.attoseconds / 1_000_000_000_000_000
        let statement: PostgresQuery = """
            WITH lowest AS (
                SELECT a.account, (SELECT min(r.cursor) FROM \(unescaped: replicas.quoted) r WHERE r.account = a.account)
                    AS cursor
                FROM \(unescaped: accounts.quoted) a
            ),
            gone AS (
                DELETE FROM \(unescaped: records.table.quoted) AS stored USING lowest
                WHERE stored.account = lowest.account AND stored.removal
                    AND stored.stamp_ms <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint - \(milliseconds)::int8
                    AND (lowest.cursor IS NULL OR stored.version <= lowest.cursor)
                RETURNING stored.account, stored.version
            )
            UPDATE \(unescaped: accounts.quoted) AS a SET horizon = greatest(a.horizon, g.top)
            FROM (SELECT account, max(version) AS top FROM gone GROUP BY account) AS g
            WHERE a.account = g.account
            """
        try await transaction(step: .write) { connection in
            // The accounts' rows first, in order, as every push takes its account's before the
            // records: taken the other way round, a push and this would deadlock.
            try await connection.run("SELECT account FROM \(unescaped: accounts.quoted) ORDER BY account FOR UPDATE")
            try await connection.run(statement)
        }
    }

    /// Starts a new epoch for `account`: a deliberate reset. Its replicas then push nothing they
    /// held, take the server's records, and archive what differed.
    ///
    /// ```swift
    /// try await table.startNewEpoch(for: account)
    /// ```
    ///
    /// - Parameter account: The account to reset.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be
    ///   reached; ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` when the connection was lost
    ///   after the statement was sent.
    public func startNewEpoch(for account: SyncAccount) async throws {
        let id = account.id
        let channel = try await resolvedRecords().channel
        try await transaction(step: .write) { connection in
            try await connection.run(
                """
                INSERT INTO \(unescaped: accounts.quoted) AS a (account, epoch, head, horizon)
                VALUES (\(id)::text, gen_random_uuid(), 0, 0)
                ON CONFLICT (account) DO UPDATE SET epoch = gen_random_uuid()
                """)
            try await connection.run("DELETE FROM \(unescaped: replicas.quoted) WHERE account = \(id)::text")
            try await connection.run("DELETE FROM \(unescaped: pushes.quoted) WHERE account = \(id)::text")
            try await poke(account: id, channel: channel, on: connection)
        }
    }

    /// Every loser the server archived for `account`, oldest first, until resolved.
    ///
    /// ```swift
    /// let lost = try await table.archivedConflicts(for: account)
    /// ```
    ///
    /// - Parameter account: The account.
    /// - Returns: The archived conflicts, each with the loser's bytes.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be
    ///   reached; ``/ValueStore/ValueStoreError/Code/corrupted`` for a row another program wrote.
    public func archivedConflicts(for account: SyncAccount) async throws -> [SyncConflict] {
        try await archivedEntries(for: account).map(\.entry.conflict)
    }

    /// Removes `conflict` from `account`'s archive on the server.
    ///
    /// ```swift
    /// for conflict in try await table.archivedConflicts(for: account) {
    ///     try await table.resolve(conflict, for: account)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - conflict: One of ``archivedConflicts(for:)``.
    ///   - account: Its account.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/unavailable`` when the server cannot be
    ///   reached; ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` when the connection was lost
    ///   after the statement was sent.
    public func resolve(_ conflict: SyncConflict, for account: SyncAccount) async throws {
        let ids = try await archivedEntries(for: account).filter { $0.entry.conflict == conflict }.map(\.id)
        guard !ids.isEmpty else { return }
        let id = account.id
        try await transaction(step: .write) { connection in
            try await connection.run(
                "DELETE FROM \(unescaped: archive.quoted) WHERE account = \(id)::text AND id = ANY(\(ids)::int8[])")
        }
    }

    private func archivedEntries(for account: SyncAccount) async throws -> [(id: Int64, entry: SyncArchivedConflict)] {
        let id = account.id
        return try await transaction(step: .read) { connection in
            var entries: [(id: Int64, entry: SyncArchivedConflict)] = []
            let rows = try await connection.query(
                "SELECT id, conflict FROM \(unescaped: archive.quoted) WHERE account = \(id)::text ORDER BY id",
                logger: PostgresValueTable.logger)
            for try await (row, bytes) in rows.decode((Int64, Data).self) {
                entries.append((row, try PostgresSyncRows.decode(SyncArchivedConflict.self, from: bytes)))
            }
            return entries
        }
    }

    private func check(_ requested: String, is account: SyncAccount) throws {
        guard SyncAccount(id: requested) == account else {
            throw ValueStoreError(
                .invalidConfiguration, store: label,
                reason:
                    "a request for another account came through the remote of account \(PostgresKey.quoted(account.id))"
            )
        }
    }
}
#endif
