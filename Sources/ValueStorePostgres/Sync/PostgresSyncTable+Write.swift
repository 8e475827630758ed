#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore
import ValueStoreSync

extension PostgresSyncTable {
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
    func write(
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
}
#endif
