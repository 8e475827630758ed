#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore
import ValueStoreSync

// The two requests, each one transaction: the rows it involves are read under the account row's
// lock, `SyncServerRules` answers as it does in memory, and what changed is written back.
extension PostgresSyncTable {
    /// Answers a push: one transaction under the account row's exclusive lock, committed durably.
    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        let table = self
        let ahead = Self.milliseconds(maximumClockAhead)
        return try await transaction(step: .write) { connection in
            try await connection.run("SELECT \(unescaped: PostgresValueTable.durable)")
            var (state, now) = try await table.lockAccount(request.account, exclusively: true, on: connection)
            try await table.read(
                records: Set(request.changes.map(\.key)),
                entries: Set(request.changes.map { SyncReplicaKey(replica: $0.stamp.replica, key: $0.key) }),
                progressOf: request.replica, of: request.account, into: &state, on: connection)
            let before = state
            let (response, wrote) = SyncServerRules.answer(
                request, in: &state, serverTime: now, maximumClockAhead: ahead)
            try await table.write(state, over: before, account: request.account, on: connection)
            if wrote {
                try await table.poke(account: request.account, on: connection)
            }
            return response
        }
    }

    /// Answers a pull: one transaction under the account row's shared lock, so no push is half
    /// done while it reads; it records the puller's progress.
    func pull(_ request: SyncPullRequest) async throws -> SyncPullResponse {
        let table = self
        return try await transaction(step: .read) { connection in
            var (state, now) = try await table.lockAccount(request.account, exclusively: false, on: connection)
            try await table.read(
                records: [], entries: [], progressOf: request.replica, of: request.account, into: &state,
                on: connection)
            let account = request.account
            let rows = try await connection.query(
                """
                SELECT record FROM \(unescaped: table.records.table.quoted)
                WHERE account = \(account)::text AND version > \(request.cursor.rawValue)::int8
                ORDER BY version LIMIT \(max(1, request.limit))::int8
                """, logger: PostgresValueTable.logger)
            for try await bytes in rows.decode(Data.self) {
                let record = try PostgresSyncRows.decode(SyncServerRecord.self, from: bytes)
                state.records[record.record.key] = record
            }
            let archivedAfter = (request.archivedAfter ?? request.cursor).rawValue
            let conflicts = try await connection.query(
                """
                SELECT conflict FROM \(unescaped: table.archive.quoted)
                WHERE account = \(account)::text AND writer = \(request.replica.rawValue)::text AND pulled
                    AND version > \(archivedAfter)::int8
                ORDER BY id
                """, logger: PostgresValueTable.logger)
            for try await bytes in conflicts.decode(Data.self) {
                state.archive.append(try PostgresSyncRows.decode(SyncArchivedConflict.self, from: bytes))
            }
            let before = state
            let response = SyncServerRules.answer(request, in: &state, serverTime: now)
            try await table.write(state, over: before, account: account, on: connection)
            return response
        }
    }

    /// Runs `body` in a transaction on a borrowed connection, with the bounds, cancellation and
    /// error classification of every value-table operation; rolls back if it throws.
    func transaction<Result: Sendable>(
        step: PostgresStep,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await records.connected(step: step, store: label) { connection in
            try await connection.run("BEGIN")
            do {
                let result = try await body(connection)
                try await connection.run("COMMIT")
                return result
            } catch {
                do {
                    try await connection.run("ROLLBACK")
                } catch {
                    // A connection that cannot roll back must not go back to the pool mid-transaction.
                    try? await connection.close()
                }
                throw error
            }
        }
    }

    /// Makes the account's row if it has none, locks it, and returns it with the server's clock.
    private func lockAccount(
        _ account: String,
        exclusively: Bool,
        on connection: PostgresConnection
    ) async throws -> (state: SyncAccountState, now: Int64) {
        try await connection.run(
            """
            INSERT INTO \(unescaped: accounts.quoted) (account, epoch, head, horizon)
            VALUES (\(account)::text, \(SyncServerRules.initialEpoch)::uuid, 0, 0)
            ON CONFLICT (account) DO NOTHING
            """)
        let rows = try await connection.query(
            """
            SELECT epoch, head, horizon, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
            FROM \(unescaped: accounts.quoted) WHERE account = \(account)::text
            \(unescaped: exclusively ? "FOR UPDATE" : "FOR SHARE")
            """, logger: PostgresValueTable.logger)
        for try await (epoch, head, horizon, now) in rows.decode((UUID, Int64, Int64, Int64).self) {
            let row = SyncAccountRow(epoch: epoch, head: ServerVersion(head), horizon: ServerVersion(horizon))
            return (SyncAccountState(row: row), now)
        }
        throw ValueStoreError(
            .io, store: label, reason: "the account's row was made but could not be read back",
            underlyingError: PostgresFailure(sqlState: nil, message: "no account row"))
    }

    /// Reads `account`'s records of `keys`, idempotency entries of `entries` and progress of
    /// `replica` into `state`.
    private func read(
        records keys: Set<String>,
        entries: Set<SyncReplicaKey>,
        progressOf replica: ReplicaID,
        of account: String,
        into state: inout SyncAccountState,
        on connection: PostgresConnection
    ) async throws {
        if !keys.isEmpty {
            let rows = try await connection.query(
                """
                SELECT record FROM \(unescaped: records.table.quoted)
                WHERE account = \(account)::text AND key = ANY(\(Array(keys))::text[])
                """, logger: PostgresValueTable.logger)
            for try await bytes in rows.decode(Data.self) {
                let record = try PostgresSyncRows.decode(SyncServerRecord.self, from: bytes)
                state.records[record.record.key] = record
            }
        }
        if !entries.isEmpty {
            let ordered = Array(entries)
            let rows = try await connection.query(
                """
                SELECT author, key, entry FROM \(unescaped: pushes.quoted)
                WHERE account = \(account)::text AND (author, key) IN (
                    SELECT * FROM unnest(\(ordered.map(\.replica.rawValue))::text[], \(ordered.map(\.key))::text[])
                )
                """, logger: PostgresValueTable.logger)
            for try await (author, key, bytes) in rows.decode((String, String, Data).self) {
                state.idempotency[SyncReplicaKey(replica: ReplicaID(author), key: key)] =
                    try PostgresSyncRows.decode(SyncIdempotencyEntry.self, from: bytes)
            }
        }
        let progress = try await connection.query(
            """
            SELECT cursor, seen FROM \(unescaped: replicas.quoted)
            WHERE account = \(account)::text AND replica = \(replica.rawValue)::text
            """, logger: PostgresValueTable.logger)
        for try await (cursor, seen) in progress.decode((Int64, Int64).self) {
            state.progress[replica] = SyncReplicaProgress(cursor: ServerVersion(cursor), seen: ServerVersion(seen))
        }
    }

    /// Writes what a request changed in `state` since `before`: records and idempotency entries
    /// (upserted), archived losers (appended), progress (never lowered) and the account row.
    private func write(
        _ state: SyncAccountState,
        over before: SyncAccountState,
        account: String,
        on connection: PostgresConnection
    ) async throws {
        let changed = state.records.filter { before.records[$0.key] != $0.value }.map(\.value)
        if !changed.isEmpty {
            let encoded = try changed.map { try PostgresSyncRows.encode($0) }
            try await connection.run(
                """
                INSERT INTO \(unescaped: records.table.quoted) AS stored (account, key, version, removal, stamp_ms, record)
                SELECT \(account)::text, * FROM unnest(
                    \(changed.map(\.record.key))::text[], \(changed.map(\.version.rawValue))::int8[],
                    \(changed.map(\.record.isRemoval))::bool[], \(changed.map(\.record.stamp.milliseconds))::int8[],
                    \(encoded.map { ByteBuffer(bytes: $0) })::bytea[])
                ON CONFLICT (account, key) DO UPDATE SET version = excluded.version, removal = excluded.removal,
                    stamp_ms = excluded.stamp_ms, record = excluded.record
                """)
        }
        let entries = state.idempotency.filter { before.idempotency[$0.key] != $0.value }
        if !entries.isEmpty {
            let keys = Array(entries.keys)
            let encoded = try keys.map { ByteBuffer(bytes: try PostgresSyncRows.encode(entries[$0]!)) }
            try await connection.run(
                """
                INSERT INTO \(unescaped: pushes.quoted) (account, author, key, entry)
                SELECT \(account)::text, * FROM unnest(
                    \(keys.map(\.replica.rawValue))::text[], \(keys.map(\.key))::text[], \(encoded)::bytea[])
                ON CONFLICT (account, author, key) DO UPDATE SET entry = excluded.entry
                """)
        }
        let archived = state.archive.dropFirst(before.archive.count)
        if !archived.isEmpty {
            let encoded = try archived.map { ByteBuffer(bytes: try PostgresSyncRows.encode($0)) }
            try await connection.run(
                """
                INSERT INTO \(unescaped: archive.quoted) (account, version, writer, pulled, conflict)
                SELECT \(account)::text, * FROM unnest(
                    \(archived.map(\.version.rawValue))::int8[], \(archived.map(\.writer.rawValue))::text[],
                    \(archived.map(\.isPulled))::bool[], \(encoded)::bytea[])
                """)
        }
        for (replica, progress) in state.progress where before.progress[replica] != progress {
            try await connection.run(
                """
                INSERT INTO \(unescaped: replicas.quoted) AS known (account, replica, cursor, seen)
                VALUES (\(account)::text, \(replica.rawValue)::text, \(progress.cursor.rawValue)::int8,
                    \(progress.seen.rawValue)::int8)
                ON CONFLICT (account, replica) DO UPDATE SET cursor = greatest(known.cursor, excluded.cursor),
                    seen = greatest(known.seen, excluded.seen)
                """)
        }
        if state.row != before.row {
            try await connection.run(
                """
                UPDATE \(unescaped: accounts.quoted) SET epoch = \(state.row.epoch)::uuid,
                    head = \(state.row.head.rawValue)::int8, horizon = \(state.row.horizon.rawValue)::int8
                WHERE account = \(account)::text
                """)
        }
    }

    /// Pokes the account's replicas at commit: a notification on the records table's channel,
    /// which every process's listener of the table hears (none skips it as its own).
    func poke(account: String, on connection: PostgresConnection) async throws {
        let payload = "0 sync \(PostgresKey.identifier(account))"
        try await connection.run("SELECT pg_notify(\(records.table.channel)::text, \(payload)::text)")
    }

    /// The pokes of `account`: the signals of its identifier on the records table's channel.
    func pokes(of account: String) -> AsyncStream<Void> {
        PostgresChanges.shared.signals(
            client: client, table: records.table, key: PostgresKey.identifier(account), label: label,
            heartbeat: heartbeatInterval)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

extension PostgresConnection {
    /// Runs a statement whose rows, if any, are not wanted.
    func run(_ statement: PostgresQuery) async throws {
        for try await _ in try await query(statement, logger: PostgresValueTable.logger) {}
    }
}

/// How the sync tables store the server's state: each row's Swift value as JSON bytes, beside
/// the columns the statements filter on.
enum PostgresSyncRows {
    static func encode(_ value: some Encodable) throws -> Data {
        try JSONEncoder().encode(value)
    }

    /// Decodes a row; bytes another program wrote are ``/ValueStore/ValueStoreError/Code/corrupted``.
    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw ValueStoreError(
                .corrupted, store: "PostgreSQL sync table",
                reason: "a row of the sync tables does not decode as \(Value.self); another program wrote it")
        }
    }
}
#endif
