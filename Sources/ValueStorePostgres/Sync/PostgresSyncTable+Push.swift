#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore
import ValueStoreSync

extension PostgresSyncTable {
    /// How many times a push reads and answers again when another write to the account came in
    /// between, before it takes the account row's lock for its read instead.
    static let optimisticPushes = 3

    /// Answers a push, committed durably. It reads in one snapshot and writes in one statement
    /// that applies only if the account's row is still the version it read (every write to an
    /// account's records, idempotency entries or epoch also rewrites its row, so nothing the
    /// answer depends on changed in between); when another write came in between, it answers
    /// again, and after ``optimisticPushes`` tries it reads under the row's lock, in a transaction.
    /// A change whose key text cannot hold (U+0000) is answered rejected without being sent, so
    /// it never fails the push of the others. (The HTTP service also rejects keys over 1,024
    /// bytes; the table takes the longer keys it always took, up to its index's limit, about 2.7
    /// KB with the account, past which the database fails the push.)
    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        let unstorable = { (change: SyncRecord) in SyncKey.unstorable(change.key, limit: .max) }
        return try await request.pushed(refusing: unstorable, store: label) { try await push(storable: $0) }
    }

    /// Answers a push whose keys the tables can all keep.
    private func push(storable request: SyncPushRequest) async throws -> SyncPushResponse {
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
}
#endif
