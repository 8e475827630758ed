import Foundation

// A whole request answered against an account's state, in memory: the in-memory server passes
// the account's whole state, the PostgreSQL server the rows the request involves, read under the
// account row's lock, and writes back what changed. Either way the same rules decide.
extension SyncServerRules {
    /// Answers a push against `state`, changing it as the server must (records written, head
    /// bumped, losers archived, idempotency entries and the pusher's progress stored).
    ///
    /// `state` needs the account row, the record of every key the request names, the
    /// idempotency entry of every change's author and key, and the pusher's progress; the
    /// archive may be empty (entries are only appended).
    ///
    /// - Returns: The answer, and whether a record was written (the account's replicas are then
    ///   poked).
    package static func answer(
        _ request: SyncPushRequest,
        in state: inout SyncAccountState,
        serverTime: Int64,
        maximumClockAhead: Int64 = defaultMaximumClockAhead
    ) -> (response: SyncPushResponse, wrote: Bool) {
        if let refusal = refusal(
            account: state.row, epoch: request.epoch, seen: request.seen,
            progress: state.progress[request.replica], cursor: request.cursor, isPush: true, isResync: false)
        {
            return (
                SyncPushResponse(
                    epoch: state.row.epoch, serverTime: serverTime, refusal: refusal, outcomes: [], settled: []),
                false
            )
        }
        var outcomes: [SyncPushResponse.Outcome] = []
        var wrote = false
        for change in request.changes {
            let entryKey = SyncReplicaKey(replica: change.stamp.replica, key: change.key)
            let decision = decide(
                change, from: request.replica, current: state.records[change.key],
                entry: state.idempotency[entryKey], version: state.row.head.next, serverTime: serverTime,
                maximumClockAhead: maximumClockAhead)
            if bumpsHead(decision) {
                state.row.head = state.row.head.next
            }
            if let write = decision.write {
                state.records[change.key] = write
                wrote = true
            }
            if let archive = decision.archive {
                state.archive.append(archive)
            }
            if let entry = decision.idempotency {
                state.idempotency[entryKey] = entry
            }
            outcomes.append(decision.outcome)
        }
        state.progress[request.replica] = progress(
            state.progress[request.replica], cursor: request.cursor, given: versions(in: outcomes))
        // Each outcome names the change it settles, so that the replica can tell a stale or
        // misrouted answer.
        let response = SyncPushResponse(
            epoch: state.row.epoch, serverTime: serverTime, refusal: nil, outcomes: outcomes,
            settled: request.changes.map(SyncChangeName.init(naming:)))
        return (response, wrote)
    }

    /// Answers a pull against `state`, recording the puller's progress in it.
    ///
    /// `state` needs the account row, the puller's progress, at least the first `request.limit`
    /// records after the request's cursor (more are ignored), and the archive entries the puller
    /// wrote after `request.archivedAfter` (or its cursor).
    package static func answer(
        _ request: SyncPullRequest,
        in state: inout SyncAccountState,
        serverTime: Int64
    ) -> SyncPullResponse {
        let row = state.row
        if let refusal = refusal(
            account: row, epoch: request.epoch, seen: request.seen, progress: state.progress[request.replica],
            cursor: request.cursor, isPush: false, isResync: request.isResync)
        {
            return SyncPullResponse(
                epoch: row.epoch, serverTime: serverTime, refusal: refusal, records: [], conflicts: [],
                cursor: request.cursor, head: row.head, horizon: row.horizon, isComplete: false,
                account: request.account)
        }
        let limit = max(1, request.limit)
        let records = first(limit, of: state.records.values.lazy.map(\.record), after: request.cursor)
        let (cursor, isComplete) = page(of: records, limit: limit, head: row.head)
        let archivedAfter = request.archivedAfter ?? request.cursor
        let conflicts = state.archive
            .filter {
                $0.isPulled && $0.writer == request.replica && $0.version > archivedAfter && $0.version <= cursor
            }
            .map(\.conflict)
        state.progress[request.replica] = progress(
            state.progress[request.replica], cursor: request.cursor, given: [cursor] + records.compactMap(\.version))
        return SyncPullResponse(
            epoch: row.epoch, serverTime: serverTime, refusal: nil, records: records, conflicts: conflicts,
            cursor: cursor, head: row.head, horizon: row.horizon, isComplete: isComplete, account: request.account)
    }

    /// The `limit` records of lowest version after `cursor`, by version: one pass over the
    /// records, keeping the lowest so far in order, rather than a sort of every record for every
    /// page, which would make a pull of n keys cost n².
    static func first(
        _ limit: Int,
        of records: some Sequence<SyncRecord>,
        after cursor: ServerVersion
    ) -> [SyncRecord] {
        var lowest: [SyncRecord] = []
        for record in records {
            let version = record.version ?? .zero
            guard version > cursor else { continue }
            if lowest.count == limit {
                guard version < (lowest[limit - 1].version ?? .zero) else { continue }
                lowest.removeLast()
            }
            // Binary search for its place among the kept ones.
            var (low, high) = (0, lowest.count)
            while low < high {
                let middle = (low + high) / 2
                if (lowest[middle].version ?? .zero) < version { low = middle + 1 } else { high = middle }
            }
            lowest.insert(record, at: low)
        }
        return lowest
    }
}
