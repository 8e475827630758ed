#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore
import ValueStoreSync

extension PostgresSyncTable {
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
}
#endif
