#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore
import ValueStoreSync

// The two requests: the rows a request involves are read in one statement, `SyncServerRules`
// answers as it does in memory, and what changed is written back in one statement. Every
// statement is prepared once per connection, so a push costs two round trips (a read, then a
// write that applies only if the account's row is still the one read) and a pull one (its read
// records the puller's progress).
extension PostgresSyncTable {
    /// How many times a push reads and answers again when another write to the account came in
    /// between, before it takes the account row's lock for its read instead.
    static let optimisticPushes = 3

    /// Answers a push, committed durably. It reads in one snapshot and writes in one statement
    /// that applies only if the account's row is still the version it read (every write to an
    /// account's records, idempotency entries or epoch also rewrites its row, so nothing the
    /// answer depends on changed in between); when another write came in between, it answers
    /// again, and after ``optimisticPushes`` tries it reads under the row's lock, in a transaction.
    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        let (request, table) = (SyncKey.normalizingKeys(of: request), self)  // SyncKey: one row per key
        let ahead = Self.milliseconds(maximumClockAhead)
        let channel = try await resolvedRecords().channel
        for attempt in 0..<Self.optimisticPushes {
            let answered = try await records.connected(step: .write, store: label) {
                connection -> SyncPushResponse? in
                // The first try answers against what this table's last push left, if that covers
                // the request; its write applies only if the row is still that version.
                let recalled = attempt == 0 ? table.pushMemory.recall(request) : nil
                let readAt = ContinuousClock.now
                var (state, now, version): (SyncAccountState, Int64, String)
                if let recalled {
                    (state, now, version) = (recalled.state, recalled.now, recalled.version)
                } else {
                    (state, now, version) = try await table.readForPush(request, locking: false, on: connection)
                }
                let before = state
                let (response, wrote) = SyncServerRules.answer(
                    request, in: &state, serverTime: now, maximumClockAhead: ahead)
                // Only an accepted answer whose write applied is remembered; anything else (a
                // refusal, a write that did not apply or failed) leaves the next push to read.
                var remembered = false
                defer {
                    if !remembered { table.pushMemory.forget(request.account) }
                }
                // The memory's progress may be behind a pull another process served: a refusal
                // is only answered from a read.
                if recalled != nil && response.refusal != nil {
                    return nil
                }
                guard
                    let written = try await table.write(
                        state, over: before, account: request.account, poking: wrote ? channel : nil,
                        by: request.replica, ifRowIs: version, on: connection)
                else { return nil }
                if response.refusal == nil {
                    table.pushMemory.remember(
                        state, at: written, after: request, read: recalled == nil ? (now, readAt) : nil)
                    remembered = true
                }
                return response
            }
            if let answered {
                return answered
            }
        }
        return try await transaction(step: .write) { connection in
            var (state, now, _) = try await table.readForPush(request, locking: true, on: connection)
            let before = state
            let (response, wrote) = SyncServerRules.answer(
                request, in: &state, serverTime: now, maximumClockAhead: ahead)
            try await table.write(
                state, over: before, account: request.account, poking: wrote ? channel : nil, by: request.replica,
                ifRowIs: nil, on: connection)
            return response
        }
    }

    /// Answers a pull in one statement, one round trip: it reads the account's row, the
    /// puller's progress, a page of records and the puller's archived losers in one snapshot (a
    /// push's writes are all in it or none, and versions commit in order under the account row's
    /// lock, so no cursor skips one), and records the puller's progress, never lowering it.
    func pull(_ request: SyncPullRequest) async throws -> SyncPullResponse {
        let table = self
        // A read step, though it records progress: a pull cancelled after its statement was sent
        // may have recorded it, which is harmless (progress only rises, and the same pull
        // records the same).
        return try await records.connected(step: .read, store: label) { connection in
            var (state, now, progressed) = try await table.readForPull(request, on: connection)
            let response = SyncServerRules.answer(request, in: &state, serverTime: now)
            if progressed, let progress = state.progress[request.replica] {
                table.pushMemory.note(progress, of: request.replica, in: request.account)
            }
            guard progressed == (response.refusal == nil) else {
                throw ValueStoreError(
                    .io, store: table.label,
                    reason: "the pull's statement \(progressed ? "recorded" : "did not record") the replica's "
                        + "progress, but the rules answer \(response.refusal.map { "\($0.rawValue)" } ?? "no refusal")")
            }
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

    /// Reads what a push involves: the account's row (made if the account has none) and its
    /// version (`xmin`, which every rewrite of the row changes), the server's clock, the records
    /// of the keys it names, the idempotency entries of its changes' authors and keys, and the
    /// pusher's progress. With `locking`, it reads under the row's exclusive lock, and its
    /// transaction takes `synchronous_commit = on` (or keeps `remote_apply`).
    private func readForPush(
        _ request: SyncPushRequest,
        locking: Bool,
        on connection: PostgresConnection
    ) async throws -> (state: SyncAccountState, now: Int64, version: String) {
        let account = request.account
        let keys = Array(Set(request.changes.map(\.key)))
        let entries = Array(Set(request.changes.map { SyncReplicaKey(replica: $0.stamp.replica, key: $0.key) }))
        let read: PostgresQuery = """
            SELECT \(unescaped: locking ? PostgresValueTable.durable : "''") IS NOT NULL, a.xmin::text, a.epoch,
                a.head, a.horizon,
                (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                (SELECT coalesce(array_agg(r.record), '{}') FROM \(unescaped: records.table.quoted) r
                    WHERE r.account = \(account)::text AND r.key = ANY(\(keys)::text[])),
                (SELECT coalesce(array_agg(p.author ORDER BY p.author, p.key), '{}') FROM \(unescaped: pushes.quoted) p
                    WHERE p.account = \(account)::text AND (p.author, p.key) IN
                        (SELECT * FROM unnest(\(entries.map(\.replica.rawValue))::text[], \(entries.map(\.key))::text[]))),
                (SELECT coalesce(array_agg(p.key ORDER BY p.author, p.key), '{}') FROM \(unescaped: pushes.quoted) p
                    WHERE p.account = \(account)::text AND (p.author, p.key) IN
                        (SELECT * FROM unnest(\(entries.map(\.replica.rawValue))::text[], \(entries.map(\.key))::text[]))),
                (SELECT coalesce(array_agg(p.entry ORDER BY p.author, p.key), '{}') FROM \(unescaped: pushes.quoted) p
                    WHERE p.account = \(account)::text AND (p.author, p.key) IN
                        (SELECT * FROM unnest(\(entries.map(\.replica.rawValue))::text[], \(entries.map(\.key))::text[]))),
                (SELECT q.cursor FROM \(unescaped: replicas.quoted) q WHERE q.account = \(account)::text AND q.replica = \(request.replica.rawValue)::text),
                (SELECT q.seen FROM \(unescaped: replicas.quoted) q WHERE q.account = \(account)::text AND q.replica = \(request.replica.rawValue)::text)
            FROM \(unescaped: accounts.quoted) a WHERE a.account = \(account)::text
            \(unescaped: locking ? "FOR UPDATE OF a" : "")
            """
        if let found = try await readState(read, of: request.replica, on: connection) {
            return found
        }
        // The account's first request: make its row, then read again under its lock.
        try await PostgresPreparedQuery.run(
            """
            INSERT INTO \(unescaped: accounts.quoted) (account, epoch, head, horizon)
            VALUES (\(account)::text, \(SyncServerRules.initialEpoch)::uuid, 0, 0) ON CONFLICT (account) DO NOTHING
            """, on: connection
        ).drain()
        guard let found = try await readState(read, of: request.replica, on: connection) else {
            throw ValueStoreError(
                .io, store: label, reason: "the account's row was made but could not be read back",
                underlyingError: PostgresFailure(sqlState: nil, message: "no account row"))
        }
        return found
    }

    /// Reads, in one snapshot, what a pull involves: the account's row (the first epoch's,
    /// empty, if it has none yet), the server's clock, the puller's progress, the first
    /// `request.limit` records after its cursor, and the losers it wrote archived after
    /// `request.archivedAfter` (or its cursor); and, in the same statement, records the progress
    /// the answer gives (as ``SyncServerRules/progress(_:cursor:given:)`` computes it, never
    /// lowered) unless the rules refuse the pull. It returns whether it recorded it.
    private func readForPull(
        _ request: SyncPullRequest,
        on connection: PostgresConnection
    ) async throws -> (state: SyncAccountState, now: Int64, progressed: Bool) {
        let archivedAfter = (request.archivedAfter ?? request.cursor).rawValue
        let account = request.account
        let replica = request.replica.rawValue
        let cursor = request.cursor.rawValue
        let limit = Int64(max(1, request.limit))
        // The refusals of SyncServerRules.refusal(account:epoch:seen:progress:cursor:isPush:isResync:),
        // in SQL: another epoch; outside a resync, a replica that saw more than the server gave
        // it (restored) or whose cursor is below the horizon.
        let read: PostgresQuery = """
            WITH asked AS (
                SELECT a.epoch, a.head, a.horizon,
                    (SELECT q.cursor FROM \(unescaped: replicas.quoted) q WHERE q.account = \(account)::text AND q.replica = \(replica)::text) AS known_cursor,
                    (SELECT q.seen FROM \(unescaped: replicas.quoted) q WHERE q.account = \(account)::text AND q.replica = \(replica)::text) AS known_seen
                FROM (SELECT \(account)::text AS account) AS named
                LEFT JOIN \(unescaped: accounts.quoted) a ON a.account = named.account
            ),
            page AS (
                SELECT r.record, r.version FROM \(unescaped: records.table.quoted) r
                WHERE r.account = \(account)::text AND r.version > \(cursor)::int8
                ORDER BY r.version LIMIT \(limit)::int8
            ),
            progressed AS (
                INSERT INTO \(unescaped: replicas.quoted) AS known (account, replica, cursor, seen)
                SELECT \(account)::text, \(replica)::text, \(cursor)::int8,
                    CASE WHEN (SELECT count(*) FROM page) >= \(limit)::int8
                        AND (SELECT max(version) FROM page) < coalesce(asked.head, 0)
                        THEN (SELECT max(version) FROM page) ELSE coalesce(asked.head, 0) END
                FROM asked
                WHERE (\(request.epoch)::uuid IS NULL OR \(request.epoch)::uuid = coalesce(asked.epoch, \(SyncServerRules.initialEpoch)::uuid))
                    AND (\(request.isResync)::bool OR (
                        NOT (\(request.seen.rawValue)::int8 > 0 AND \(request.seen.rawValue)::int8 > coalesce(asked.known_seen, 0))
                        AND \(cursor)::int8 >= coalesce(asked.horizon, 0)))
                ON CONFLICT (account, replica) DO UPDATE SET cursor = greatest(known.cursor, excluded.cursor),
                    seen = greatest(known.seen, excluded.seen)
                RETURNING 1
            )
            SELECT asked.epoch, asked.head, asked.horizon, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                (SELECT coalesce(array_agg(page.record ORDER BY page.version), '{}') FROM page),
                (SELECT coalesce(array_agg(c.conflict ORDER BY c.id), '{}') FROM \(unescaped: archive.quoted) c
                    WHERE c.account = \(account)::text AND c.writer = \(replica)::text AND c.pulled
                        AND c.version > \(archivedAfter)::int8),
                asked.known_cursor, asked.known_seen, (SELECT count(*) FROM progressed)
            FROM asked
            """
        for try await row in try await PostgresPreparedQuery.run(read, on: connection) {
            let (epoch, head, horizon, now, records, conflicts, cursor, seen, progressed) = try row.decode(
                (UUID?, Int64?, Int64?, Int64, [ByteBuffer], [ByteBuffer], Int64?, Int64?, Int64).self)
            var state = SyncAccountState(
                row: SyncAccountRow(
                    epoch: epoch ?? SyncServerRules.initialEpoch, head: ServerVersion(head ?? 0),
                    horizon: ServerVersion(horizon ?? 0)))
            for bytes in records {
                let record = try PostgresSyncRows.decode(SyncServerRecord.self, from: Data(bytes.readableBytesView))
                state.records[record.record.key] = record
            }
            state.archive = try conflicts.map {
                try PostgresSyncRows.decode(SyncArchivedConflict.self, from: Data($0.readableBytesView))
            }
            if let cursor, let seen {
                state.progress[request.replica] = SyncReplicaProgress(
                    cursor: ServerVersion(cursor), seen: ServerVersion(seen))
            }
            return (state, now, progressed > 0)
        }
        throw ValueStoreError(
            .io, store: label, reason: "the pull's statement returned no row",
            underlyingError: PostgresFailure(sqlState: nil, message: "no row"))
    }

    /// Runs a push's read and decodes its one row, or `nil` when the account has no row yet.
    private func readState(
        _ read: PostgresQuery,
        of replica: ReplicaID,
        on connection: PostgresConnection
    ) async throws -> (state: SyncAccountState, now: Int64, version: String)? {
        for try await row in try await PostgresPreparedQuery.run(read, on: connection) {
            let (_, version, epoch, head, horizon, now, records, authors, keys, entries, cursor, seen) = try row.decode(
                (
                    Bool, String, UUID, Int64, Int64, Int64, [ByteBuffer], [String], [String], [ByteBuffer], Int64?,
                    Int64?
                )
                .self)
            var state = SyncAccountState(
                row: SyncAccountRow(epoch: epoch, head: ServerVersion(head), horizon: ServerVersion(horizon)))
            for bytes in records {
                let record = try PostgresSyncRows.decode(SyncServerRecord.self, from: Data(bytes.readableBytesView))
                state.records[record.record.key] = record
            }
            for (index, bytes) in entries.enumerated() where index < authors.count && index < keys.count {
                state.idempotency[SyncReplicaKey(replica: ReplicaID(authors[index]), key: keys[index])] =
                    try PostgresSyncRows.decode(SyncIdempotencyEntry.self, from: Data(bytes.readableBytesView))
            }
            if let cursor, let seen {
                state.progress[replica] = SyncReplicaProgress(cursor: ServerVersion(cursor), seen: ServerVersion(seen))
            }
            return (state, now, version)
        }
        return nil
    }

    /// Writes, in one statement, what a request changed in `state` since `before`: records and
    /// idempotency entries (upserted), archived losers (appended), progress (never lowered), the
    /// account row, and the poke on `channel` when given (delivered at commit), naming `author`
    /// and the head the write reached.
    ///
    /// With `version`, the statement writes only if the account's row is still that version
    /// (`xmin`), rewrites the row in any case so the next writer sees a new version, and takes
    /// `synchronous_commit = on` (or keeps `remote_apply`); it returns the row's new version if
    /// it wrote, `nil` if not. Without, it writes (in a transaction that holds the row's lock)
    /// and returns the row's new version, or `""` when it left the row alone.
    @discardableResult
    private func write(
        _ state: SyncAccountState,
        over before: SyncAccountState,
        account: String,
        poking channel: String?,
        by author: ReplicaID,
        ifRowIs version: String?,
        on connection: PostgresConnection
    ) async throws -> String? {
        let records = state.records.values.filter { before.records[$0.record.key] != $0 }
        let entries = state.idempotency.filter { before.idempotency[$0.key] != $0.value }
        let entryKeys = Array(entries.keys)
        let archived = Array(state.archive.dropFirst(before.archive.count))
        let progress = state.progress.filter { before.progress[$0.key] != $0.value }.first
        // A push rewrites the row whatever it changed, so an optimistic push that read before it
        // sees a new version.
        let rewritesRow = state.row != before.row || channel != nil || !entries.isEmpty || !records.isEmpty
        // A guarded write always runs: its row's version is the check, even with nothing else.
        guard
            !records.isEmpty || !entries.isEmpty || !archived.isEmpty || progress != nil || rewritesRow
                || channel != nil || version != nil
        else { return "" }
        // With a version, the row's update is the check every other write waits for; without,
        // it is a plain update of what changed, and everything applies.
        let guarded = version != nil
        let applies = "(NOT \(guarded) OR EXISTS (SELECT 1 FROM moved))"
        let statement: PostgresQuery = """
            WITH moved AS (
                UPDATE \(unescaped: accounts.quoted) SET epoch = \(state.row.epoch)::uuid,
                    head = \(state.row.head.rawValue)::int8, horizon = \(state.row.horizon.rawValue)::int8
                WHERE account = \(account)::text AND CASE WHEN \(guarded)::bool
                    THEN xmin::text = \(version ?? "")::text AND \(unescaped: PostgresValueTable.durable) IS NOT NULL
                    ELSE \(rewritesRow)::bool END
                RETURNING xmin::text AS version
            ),
            written AS (
                INSERT INTO \(unescaped: self.records.table.quoted) AS stored (account, key, version, removal, stamp_ms, record)
                SELECT \(account)::text, * FROM unnest(
                    \(records.map(\.record.key))::text[], \(records.map(\.version.rawValue))::int8[],
                    \(records.map(\.record.isRemoval))::bool[], \(records.map(\.record.stamp.milliseconds))::int8[],
                    \(try records.map { ByteBuffer(bytes: try PostgresSyncRows.encode($0)) })::bytea[])
                WHERE \(unescaped: applies)
                ON CONFLICT (account, key) DO UPDATE SET version = excluded.version, removal = excluded.removal,
                    stamp_ms = excluded.stamp_ms, record = excluded.record
            ),
            remembered AS (
                INSERT INTO \(unescaped: pushes.quoted) (account, author, key, entry)
                SELECT \(account)::text, * FROM unnest(
                    \(entryKeys.map(\.replica.rawValue))::text[], \(entryKeys.map(\.key))::text[],
                    \(try entryKeys.map { ByteBuffer(bytes: try PostgresSyncRows.encode(entries[$0]!)) })::bytea[])
                WHERE \(unescaped: applies)
                ON CONFLICT (account, author, key) DO UPDATE SET entry = excluded.entry
            ),
            lost AS (
                INSERT INTO \(unescaped: archive.quoted) (account, version, writer, pulled, conflict)
                SELECT \(account)::text, * FROM unnest(
                    \(archived.map(\.version.rawValue))::int8[], \(archived.map(\.writer.rawValue))::text[],
                    \(archived.map(\.isPulled))::bool[],
                    \(try archived.map { ByteBuffer(bytes: try PostgresSyncRows.encode($0)) })::bytea[])
                WHERE \(unescaped: applies)
            ),
            progressed AS (
                INSERT INTO \(unescaped: replicas.quoted) AS known (account, replica, cursor, seen)
                SELECT \(account)::text, \(progress?.key.rawValue ?? "")::text, \(progress?.value.cursor.rawValue ?? 0)::int8,
                    \(progress?.value.seen.rawValue ?? 0)::int8
                WHERE \(progress != nil)::bool AND \(unescaped: applies)
                ON CONFLICT (account, replica) DO UPDATE SET cursor = greatest(known.cursor, excluded.cursor),
                    seen = greatest(known.seen, excluded.seen)
            )
            SELECT \(unescaped: applies),
                (SELECT count(*) FROM pg_notify(\(channel ?? "")::text, \(PostgresChangeNotice.syncPayload(account: account, author: author, head: state.row.head))::text)
                    WHERE \(channel != nil)::bool AND \(unescaped: applies)),
                (SELECT version FROM moved)
            """
        var (applied, written): (Bool, String?) = (false, nil)
        for try await row in try await PostgresPreparedQuery.run(statement, on: connection) {
            (applied, _, written) = try row.decode((Bool, Int64, String?).self)
        }
        return applied ? written ?? "" : nil
    }

    /// Pokes the account's replicas at commit: a notification on the records table's channel
    /// (its resolved identity's, as every spelling of the name hears), which every process's
    /// listener of the table hears (none skips it as its own).
    func poke(account: String, channel: String, on connection: PostgresConnection) async throws {
        let payload = PostgresChangeNotice.syncPayload(account: account)
        try await connection.run("SELECT pg_notify(\(channel)::text, \(payload)::text)")
    }

    /// The records table the server finds for the name, looked up once per process and
    /// spelling: its channel carries the pokes, whichever spelling a process uses.
    func resolvedRecords() async throws -> PostgresTableName {
        if let known = PostgresResolvedTables.lookUp(records.spelling, client: client) {
            return known
        }
        let name = records.table.quoted
        let found = try await transaction(step: .read) { connection in
            var found: (String, String)?
            let rows = try await connection.query(
                """
                SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.oid = to_regclass(\(name)::text)
                """, logger: PostgresValueTable.logger)
            for try await row in rows.decode((String, String).self) {
                found = row
            }
            return found
        }
        guard let (schema, relation) = found else {
            throw ValueStoreError(
                .invalidConfiguration, store: label,
                reason: "the sync tables '\(self.name)_*' do not exist; call createIfNeeded() first")
        }
        let resolved = PostgresTableName.resolved(schema: schema, table: relation)
        PostgresResolvedTables.remember(resolved, for: records.spelling, client: client)
        return resolved
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

extension AsyncSequence {
    /// Reads every element and drops it: a statement's rows, when only its effect matters.
    func drain() async throws {
        for try await _ in self {}
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
