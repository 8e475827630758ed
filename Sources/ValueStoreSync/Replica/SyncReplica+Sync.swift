import Foundation
import Synchronization
import ValueStore

extension SyncReplica {
    /// Pushes every pending change, then pulls to the server's head; first, when needed, pulls
    /// the whole state (the first sync, or what a refusal asks for).
    ///
    /// ```swift
    /// try await replica.syncNow()
    /// ```
    ///
    /// A `.merge` change that meets another device's record is merged and pushed again in the
    /// same call, if this process made the key's store. Changes that lost are archived, and the
    /// replica's conflicts stream yields them.
    ///
    /// - Throws: The remote's error when the server cannot be reached; every change stays
    ///   pending, and ``SyncStatus/lastError`` shows the error until a sync succeeds. A merge
    ///   that fails (a value of the key its type cannot decode) throws its error once the rest
    ///   is pushed and pulled; that change stays pending.
    public func syncNow() async throws {
        try await open()
        try await rounds.withLock {
            do {
                try await recordingErrors { try await syncRound(pulling: true) }
            } catch let unmerged as Unmerged {
                throw unmerged.error
            }
        }
    }

    /// One sync: a whole-state pull when one is due, the pushes, and the pull to the head (if
    /// `pulling`). A refusal makes it start again with the whole-state pull the refusal calls
    /// for, a few times at most.
    func syncRound(pulling: Bool) async throws {
        try await catchUpIfNeeded()  // another process's changes, to push and to show
        var refusal = withState { $0.meta?.resync }
        var unmerged: (any Error)?  // a merge that failed: the round still pulls, then throws it
        for _ in 0..<8 {
            let hasPulled = withState { $0.meta?.hasPulled ?? false }
            if !hasPulled || refusal != nil {
                if let next = try await resync(answering: refusal) {
                    refusal = next
                    continue
                }
                refusal = nil
            }
            if let next = try await pushPending(unmerged: &unmerged) {
                refusal = next
                continue
            }
            if pulling, let next = try await pullToHead() {
                refusal = next
                continue
            }
            if let unmerged { throw Unmerged(error: unmerged) }
            return
        }
        throw ValueStoreError(
            .unavailable, store: label,
            reason: "the server kept refusing the replica's requests (last: \(refusal.map(\.rawValue) ?? "none"))")
    }

    // MARK: Pushing

    /// Pushes the pending changes in batches until none is left that can go (a `.merge` change
    /// waiting for its store, or whose merge failed into `unmerged`, stays), or a refusal.
    ///
    /// - Throws: The remote's error; ``/ValueStore/ValueStoreError/Code/unavailable`` when changes
    ///   that could go are still pending after as many pushes as their batches and a few more.
    func pushPending(unmerged: inout (any Error)?) async throws -> SyncRefusal? {
        unmerged = nil  // each push merges again
        var waiting: Set<String> = []
        let batchSize = max(1, options.pushBatchSize)
        let passes = withState { $0.pendingSince.count } / batchSize + 8
        var tooFarAhead = 0
        var order = PushOrder()
        for _ in 0..<passes {
            let request = withState { state -> SyncPushRequest? in
                let changes = order.batch(of: batchSize, from: state, skipping: waiting)
                guard !changes.isEmpty, let meta = state.meta else { return nil }
                return SyncPushRequest(
                    account: account.id, replica: meta.id, epoch: meta.epoch, seen: meta.seen, cursor: meta.cursor,
                    changes: changes)
            }
            guard let request else { return nil }
            enter(.pushing)
            let response = try await remote.push(request)
            let now = options.clock.milliseconds
            if let refusal = response.refusal {
                return refusal
            }
            let settled = try Self.pair(response, with: request, from: remote.label)
            tooFarAhead = response.outcomes.count { $0 == .tooFarAhead }
            try await exclusively {
                try await settle(
                    settled, serverTime: response.serverTime, now: now, waiting: &waiting, unmerged: &unmerged)
            }
        }
        let undelivered = withState { state in state.records.count { $0.value.isPending && !waiting.contains($0.key) } }
        guard undelivered > 0 else { return nil }
        throw ValueStoreError(
            .unavailable, store: label,
            reason: "\(undelivered) changes are still pending after \(passes) pushes: "
                + (tooFarAhead > 0
                    ? "the server refused \(tooFarAhead) of the last push's stamps as too far in its future"
                    : "the server kept answering without settling them"))
    }

    /// Applies a push's outcomes, each with the change it settles, to the records, in one commit.
    private func settle(
        _ settled: [(change: SyncRecord, outcome: SyncPushResponse.Outcome)],
        serverTime: Int64,
        now: Int64,
        waiting: inout Set<String>,
        unmerged: inout (any Error)?
    ) async throws {
        var (meta, records, rejected, merges, archive) = withState {
            ($0.meta!, $0.records, $0.rejected, $0.merges, $0.archive)
        }
        meta.clock = withState { state in
            state.clock.observe(serverTime: serverTime, now: now)
            return state.clock
        }
        var changed: [String: LocalRecord?] = [:]
        var rebased: Set<String> = []
        var newlyRejected: [SyncConflict] = []
        var lost: [SyncConflict] = []
        var tooFarAhead: [String] = []
        var acknowledged: Set<ServerVersion> = []
        for (change, outcome) in settled {
            let key = change.key
            guard let local = records[key] else { continue }
            let isThisChange = local.stamp == change.stamp
            switch outcome {
            case .accepted(let version):
                meta.seen = max(meta.seen, version)
                if change.stamp.replica == meta.id {
                    // Its own stamp, now the server's. Another's (a copied change the server knew
                    // already) may be a stamp its author made too far ahead and stamped again.
                    meta.clock.observe(change.stamp)
                }
                acknowledged.insert(version)
                var next = local
                if isThisChange {
                    next.version = version
                    next.synced = nil
                    next.isRestoring = false
                } else if local.isPending {
                    // A newer local change was made on this one: it is made on the server's record now.
                    var acknowledged = change
                    acknowledged.version = version
                    next.base = change.identity
                    next.synced = acknowledged
                    if (next.latest?.version ?? .zero) <= version {
                        next.latest = nil
                    }
                    rebased.insert(key)
                }
                changed[key] = next
            case .overtaken(let current):
                meta.seen = max(meta.seen, current.version ?? .zero)
                meta.clock.observe(current.stamp)
                if isThisChange {
                    changed[key] = LocalRecord(synced: current)
                } else if local.isPending {
                    var next = local
                    next.base = change.identity
                    next.synced = change
                    next.note(current)
                    changed[key] = next
                    rebased.insert(key)
                }
            case .lost(let current):
                if let current {
                    meta.seen = max(meta.seen, current.version ?? .zero)
                    meta.clock.observe(current.stamp)
                }
                // The server archived it, and so does the replica, with its value, as the server did.
                let conflict = SyncConflict(
                    key: key, value: change.value, stamp: change.identity, cause: .lost, winner: current?.identity)
                if !archive.contains(conflict) && !lost.contains(conflict) {
                    lost.append(conflict)
                }
                if isThisChange {
                    changed[key] = .some(current.map(LocalRecord.init(synced:)))
                }
            case .mergeNeeded(let current):
                if let current {
                    meta.seen = max(meta.seen, current.version ?? .zero)
                    meta.clock.observe(current.stamp)
                }
                guard local.isPending, let merge = merges[key] else {
                    waiting.insert(key)
                    continue
                }
                let merged: Data?
                do {
                    merged = try merge(local.synced?.value, local.value, current?.value)
                } catch {
                    // A value this store cannot decode: the change waits, pending; the round throws.
                    waiting.insert(key)
                    unmerged = unmerged ?? error
                    continue
                }
                let stamp = meta.clock.stamp(now: now, replica: meta.id)
                changed[key] = LocalRecord(
                    value: merged, stamp: stamp, base: current?.identity, replaces: local.replacing(), policy: .merge,
                    synced: current)
            case .superseded:
                // A later change of its author replaced it, then was removed and collected.
                if isThisChange {
                    changed[key] = .some(local.fallback)
                }
            case .tooFarAhead:
                if isThisChange && local.isPending {
                    tooFarAhead.append(key)
                }
            case .rejected(let reason):
                if isThisChange && local.isPending {
                    newlyRejected.append(
                        SyncConflict(
                            key: key, value: local.value, stamp: local.identity, cause: .rejected, reason: reason)
                    )
                    changed[key] = .some(local.fallback)
                }
            }
        }
        if !tooFarAhead.isEmpty {
            // The server's time taught the clock its offset: stamp again every pending change of
            // this replica stamped after the server's time (the refused ones, and those not
            // pushed yet), after everything seen but not after the refused stamps.
            for (key, record) in changed {
                records[key] = record
            }
            let restamped = Set(tooFarAhead.filter { records[$0]!.identity.replica == meta.id }).union(
                records.filter {
                    $0.value.isPending && $0.value.identity.replica == meta.id
                        && $0.value.stamp.milliseconds > serverTime
                }.keys)
            let kept = records.values.filter { $0.isPending && $0.stamp.replica == meta.id }.map(\.stamp)
                .filter { $0.milliseconds <= serverTime }
            meta.clock.goBack(keeping: kept, serverTime: serverTime)
            // Each after the server's records of its key: a key whose record is stamped in the
            // server's future (its clock was ahead) is stamped after that record, last, so that
            // the other keys' stamps do not follow it.
            let floors = Dictionary(uniqueKeysWithValues: restamped.map { ($0, records[$0]!.serverStamps) })
            let highest = floors.mapValues { $0.map(\.reading).max() ?? .zero }
            for key in restamped.sorted(by: { (highest[$0]!, $0) < (highest[$1]!, $1) }) {
                var next = records[key]!
                next.origin = next.identity
                next.stamp = meta.clock.stamp(now: now, replica: meta.id, after: floors[key]!)
                changed[key] = next
            }
            // A change copied with this folder from another replica cannot be stamped again: its
            // author may have made later changes on it, which a new stamp would come after. It
            // is archived, with its value.
            for key in tooFarAhead where !restamped.contains(key) {
                let copied = records[key]!
                let conflict = SyncConflict(
                    key: key, value: copied.value, stamp: copied.identity, cause: .lost,
                    reason: "a change copied from another replica's folder, stamped too far in the server's future")
                if !archive.contains(conflict) && !lost.contains(conflict) {
                    lost.append(conflict)
                }
                changed[key] = .some(copied.fallback)
            }
        }
        // Versions right after the cursor that are this push's own writes need no pull.
        while acknowledged.contains(meta.cursor.next) {
            meta.cursor = meta.cursor.next
        }
        rejected += newlyRejected
        archive += lost
        let rejections = withState { state in newlyRejected.map { state.pendingSince[$0.key] ?? 0 } }
        // Let go of the copy, so that the commit changes the records in place: with it kept, every
        // batch copied every record.
        records = [:]
        // An acknowledgement that leaves nothing pending it changed and archives nothing is
        // flushed with the next commit: should a crash take it back, its changes are pending
        // again, as they were, and the server answers their push again as it did. A change
        // still pending (rebased, merged, stamped again) is flushed before a push can send it.
        let isAcknowledgementOnly =
            lost.isEmpty && newlyRejected.isEmpty && changed.values.allSatisfy { $0?.isPending != true }
        try await commit(
            ReplicaFiles.Changes(
                meta: meta, records: changed, archive: lost.isEmpty ? nil : archive,
                rejected: newlyRejected.isEmpty ? nil : rejected),
            announcing: lost, flush: isAcknowledgementOnly ? .withTheNext : .now
        ) { state in
            state.rejections += rejections
            for key in rebased where state.records[key]?.isPending == true {
                state.pendingSince[key] = state.lastWrite[key] ?? 0
            }
        }
    }

    // MARK: Pulling

    /// Pulls pages from the cursor until the head, applying each in one commit; returns a
    /// refusal if the server answers one.
    func pullToHead() async throws -> SyncRefusal? {
        while true {
            let request = withState { state in
                let meta = state.meta!
                return SyncPullRequest(
                    account: account.id, replica: meta.id, epoch: meta.epoch, cursor: meta.cursor, seen: meta.seen,
                    limit: max(1, options.pullPageSize), isResync: false)
            }
            enter(.pulling)
            let page = try await remote.pull(request)
            try Self.check(page, answers: request, from: remote.label)
            let now = options.clock.milliseconds
            if let refusal = page.refusal {
                return refusal
            }
            try await exclusively {
                try await apply(page, now: now)
            }
            if page.isComplete || page.cursor <= request.cursor {
                return nil
            }
        }
    }

    /// Applies a pulled page in one commit: records that are newer than the replica's (a pending
    /// change stays, unless this is its acknowledgement), the replica's archived changes, the
    /// cursor; and forgets the removals below the server's horizon.
    private func apply(_ page: SyncPullResponse, now: Int64) async throws {
        var (meta, records, archive) = withState { ($0.meta!, $0.records, $0.archive) }
        meta.clock = withState { state in
            state.clock.observe(serverTime: page.serverTime, now: now)
            return state.clock
        }
        var changed: [String: LocalRecord?] = [:]
        for record in page.records {
            meta.clock.observe(record.stamp)
            guard let local = records[record.key] else {
                changed[record.key] = LocalRecord(synced: record)
                continue
            }
            if local.isPending {
                // Its acknowledgement, or a record made on it: the change is settled. Otherwise the
                // change stays, and the record is kept in case the change is dropped.
                if local.identity == record.identity || record.isMade(on: local.identity) {
                    changed[record.key] = LocalRecord(synced: record)
                } else {
                    var next = local
                    next.note(record)
                    changed[record.key] = next
                }
            } else if (record.version ?? .zero) > (local.version ?? .zero) {
                changed[record.key] = LocalRecord(synced: record)
            }
        }
        // The synced removals alone, not every record: a scan of every record per page cost `n²`.
        for key in withState({ $0.syncedRemovals }) where changed[key] == nil {
            if let record = records[key], (record.version ?? .zero) <= page.horizon {
                changed[key] = .some(nil)
            }
        }
        let added = page.conflicts.filter { conflict in
            !archive.contains { $0.key == conflict.key && $0.stamp == conflict.stamp }
        }
        archive += added
        let before = meta
        // Let go of the copy, so that the commit changes the records in place: with it kept, every
        // page copied every record.
        records = [:]
        meta.cursor = max(meta.cursor, page.cursor)  // another process sharing the folder may have pulled further
        meta.seen = max(meta.seen, page.cursor)
        // A page that brings nothing commits nothing: the clock alone is not worth a write (on
        // opening, it starts after every stamp in the file anyway).
        // Records pulled, none of them a pending change: shown before they are flushed, since a
        // crash that takes them back from this device leaves them on the server, pulled again.
        let isPulledOnly = added.isEmpty && changed.values.allSatisfy { $0?.isPending != true }
        try await commit(
            ReplicaFiles.Changes(meta: meta, records: changed, archive: added.isEmpty ? nil : archive),
            announcing: added,
            writing: !changed.isEmpty || !added.isEmpty || meta.cursor != before.cursor || meta.seen != before.seen,
            flush: isPulledOnly ? .afterAnnouncing : .now)
    }
}
