import Foundation
import Synchronization
import ValueStore

extension SyncReplica {
    /// Pulls the whole state and reconciles it with the records in one commit, as `refusal`
    /// asks (`nil`: the first sync); returns a refusal if the server answers one.
    ///
    /// - First sync: edits made before it meet the server's records as ``SyncOptions/firstSync``
    ///   says; `.compareAndSet` and `.merge` edits are left to the push, which settles them.
    /// - ``SyncRefusal/resyncNeeded``: the server's records replace older ones, and the synced
    ///   keys the server no longer has (their removals were collected) are removed.
    /// - ``SyncRefusal/restored``: every synced record the replica holds that the server lacks,
    ///   or holds other than it (not a record made on it), is pending again, to be pushed back
    ///   with its own stamp and base and settled by stamp; a record the server lacks below its
    ///   horizon was removed, and goes. A pending change made on a record the server lost is
    ///   settled by stamp too.
    /// - ``SyncRefusal/epochChanged``: the server's records replace the replica's, and every
    ///   difference, pending changes and acknowledged removals included, is archived; nothing
    ///   is pushed.
    ///
    /// The refusal is recorded before the pull, so a crash in the middle starts it again.
    func resync(answering refusal: SyncRefusal?) async throws -> SyncRefusal? {
        enter(.resyncing)
        if let refusal {
            try await exclusively {
                // The meta with the clock as it is now: the one of the last commit is older
                // than the stamps of the local changes made since, and taking it would turn
                // the clock back below them.
                var meta = withState { $0.currentMeta! }
                guard meta.resync != refusal else { return }
                meta.resync = refusal
                try await commit(ReplicaFiles.Changes(meta: meta))
            }
        }
        let (id, epoch, seen, cursor) = withState { state in
            let meta = state.meta!
            return (meta.id, meta.epoch, meta.seen, meta.cursor)
        }
        // Pages from version zero; if the epoch changes under them, from zero again.
        var serverRecords: [String: SyncRecord] = [:]
        var conflicts: [SyncConflict] = []
        var position = ServerVersion.zero
        var pageEpoch: UUID?
        var last: SyncPullResponse?
        while true {
            let request = SyncPullRequest(
                account: account.id, replica: id,
                epoch: refusal == .epochChanged || refusal == nil ? pageEpoch : (pageEpoch ?? epoch),
                cursor: position, seen: seen, limit: max(1, options.pullPageSize), isResync: true,
                archivedAfter: cursor)
            let page = try await remote.pull(request)
            try Self.check(page, answers: request, from: remote.label)
            if let refusal = page.refusal {
                if refusal == .epochChanged, pageEpoch != nil {
                    // A new epoch while paging: start over in it.
                    (serverRecords, conflicts, position, pageEpoch) = ([:], [], .zero, nil)
                    continue
                }
                return refusal
            }
            pageEpoch = page.epoch
            for record in page.records {
                serverRecords[record.key] = record
            }
            conflicts += page.conflicts
            last = page
            if page.isComplete || page.cursor <= position {
                break
            }
            position = page.cursor
        }
        guard let last else { return nil }
        let now = options.clock.milliseconds
        try await exclusively {
            try await reconcile(with: serverRecords, conflicts: conflicts, page: last, answering: refusal, now: now)
        }
        return nil
    }

    /// Reconciles the records with the server's whole state, in one commit that also moves the
    /// cursor, takes the epoch and clears the refusal.
    private func reconcile(
        with server: [String: SyncRecord],
        conflicts: [SyncConflict],
        page last: SyncPullResponse,
        answering refusal: SyncRefusal?,
        now: Int64
    ) async throws {
        var (meta, records, archive) = withState { ($0.meta!, $0.records, $0.archive) }
        meta.clock = withState { state in
            state.clock.observe(serverTime: last.serverTime, now: now)
            return state.clock
        }
        for record in server.values {
            meta.clock.observe(record.stamp)
        }
        var changed: [String: LocalRecord?] = [:]
        var archived: [SyncConflict] = []
        let isFirstSync = !meta.hasPulled
        switch refusal {
        case nil, .resyncNeeded?:
            for (key, remote) in server {
                guard let local = records[key] else {
                    changed[key] = LocalRecord(synced: remote)
                    continue
                }
                if local.identity == remote.identity || remote.isMade(on: local.identity) {
                    changed[key] = LocalRecord(synced: remote)
                } else if !local.isPending {
                    if (remote.version ?? .zero) > (local.version ?? .zero) || refusal == .resyncNeeded {
                        changed[key] = LocalRecord(synced: remote)
                    }
                } else if isFirstSync, !remote.isRemoval,
                    local.policy == .lastWriterWins || local.policy == .saveBeatsRemove
                {
                    // An edit from before the first pull meets a value the user already has.
                    switch options.firstSync {
                    case .keepRemote:
                        archived.append(
                            SyncConflict(
                                key: key, value: local.value, stamp: local.identity, cause: .firstSync,
                                winner: remote.identity))
                        changed[key] = LocalRecord(synced: remote)
                    case .keepLocal:
                        archived.append(
                            SyncConflict(
                                key: key, value: remote.value, stamp: remote.identity, cause: .firstSync,
                                winner: local.identity))
                        var next = local
                        next.base = remote.identity
                        next.synced = remote
                        changed[key] = next
                    }
                } else {
                    // Stays pending; the record is kept in case the change is dropped.
                    var next = local
                    next.note(remote)
                    changed[key] = next
                }
            }
            if refusal == .resyncNeeded {
                for (key, local) in records where server[key] == nil && !local.isPending {
                    changed[key] = .some(nil)
                }
            }
        case .restored?:
            for (key, local) in records {
                let remote = server[key]
                if let remote, remote.identity == local.identity || remote.isMade(on: local.identity) {
                    // The server has it, or a record made on it.
                    changed[key] = LocalRecord(synced: remote)
                } else if local.isPending {
                    var next = local
                    if let remote {
                        next.note(remote)
                    }
                    if let base = local.synced, remote?.identity != base.identity {
                        // Made on a record the server lost: it is settled by stamp, as the
                        // records pushed back are.
                        next.isRestoring = true
                    }
                    if next != local {
                        changed[key] = next
                    }
                } else if remote == nil, (local.version ?? .zero) <= last.horizon {
                    // Its removal was collected before the server's backup.
                    changed[key] = .some(nil)
                } else {
                    // Push it back as it was: the server settles it by stamp, or knows it
                    // already (its author's later change), and archives the loser.
                    var next = local
                    next.version = nil
                    next.synced = remote
                    next.isRestoring = true
                    changed[key] = next
                }
            }
            for (key, remote) in server where records[key] == nil {
                changed[key] = LocalRecord(synced: remote)
            }
        case .epochChanged?:
            for key in Set(records.keys).union(server.keys) {
                let local = records[key]
                let remote = server[key]
                if let local, let remote, local.identity == remote.identity, !local.isPending {
                    changed[key] = LocalRecord(synced: remote)
                    continue
                }
                // Every difference is archived: a pending change, a value, and a removal the
                // server acknowledged, which the server (restored from a backup, or the account
                // taken back to the epoch of one) may have lost. A removal differs from a key
                // the server has no record of too: a tombstone orders later saves, and the
                // server taking a save over absence would otherwise drop it unarchived.
                if let local {
                    archived.append(
                        SyncConflict(
                            key: key, value: local.value, stamp: local.identity, cause: .newEpoch,
                            winner: remote?.identity))
                }
                changed[key] = .some(remote.map(LocalRecord.init(synced:)))
            }
        }
        let delivered = conflicts.filter { conflict in
            !archive.contains { $0.key == conflict.key && $0.stamp == conflict.stamp }
        }
        archived += delivered
        archive += archived
        meta.epoch = last.epoch
        meta.cursor = last.cursor
        meta.seen = last.cursor
        meta.hasPulled = true
        meta.resync = nil
        try await commit(
            ReplicaFiles.Changes(meta: meta, records: changed, archive: archived.isEmpty ? nil : archive),
            announcing: archived)
    }
}
