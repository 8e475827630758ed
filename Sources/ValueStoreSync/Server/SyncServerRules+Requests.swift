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
        // The first `limit` records after the cursor, by version (the state may hold more: see above).
        let records = Array(
            state.records.values.map(\.record)
                .filter { ($0.version ?? .zero) > request.cursor }
                .sorted { ($0.version ?? .zero) < ($1.version ?? .zero) }
                .prefix(limit))
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
}
