package import Foundation

/// The sync server's decisions, as pure functions of the rows involved, so that every server
/// (the in-memory one, the PostgreSQL one inside one transaction under the account row's lock)
/// decides exactly alike.
///
/// `package`: `ValueStorePostgres` serves `ValueStoreSync` with them.
package enum SyncServerRules {
    /// How far in the server's future a stamp may be, by default: a minute.
    package static let defaultMaximumClockAhead: Int64 = 60_000

    /// Every account's first epoch, the same everywhere: a server restored from a backup taken
    /// before the account existed has it too, so the account's replicas find the server behind
    /// (``SyncRefusal/restored``) and push their records back, rather than take it for a reset.
    /// Only ``InMemorySyncServer/startNewEpoch(for:)`` makes a random one.
    package static let initialEpoch = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    // MARK: Refusals

    /// Why a request must be refused before anything in it is looked at, if it must.
    ///
    /// - A request for another epoch: ``SyncRefusal/epochChanged``. A push must name the epoch;
    ///   a pull without one takes the server's.
    /// - Outside a resync, a replica that was given more than this server remembers giving it:
    ///   ``SyncRefusal/restored``. A replica the server does not know that was given anything
    ///   is a copied folder's new identity, or was served by history this server lost; either
    ///   way it reconciles its whole state with the server's.
    /// - Outside a resync, a cursor below the horizon: ``SyncRefusal/resyncNeeded``.
    package static func refusal(
        account: SyncAccountRow,
        epoch: UUID?,
        seen: ServerVersion,
        progress: SyncReplicaProgress?,
        cursor: ServerVersion,
        isPush: Bool,
        isResync: Bool
    ) -> SyncRefusal? {
        if let epoch, epoch != account.epoch {
            return .epochChanged
        }
        if isPush && epoch == nil {
            return .epochChanged
        }
        if isResync {
            return nil
        }
        if seen > .zero && seen > (progress?.seen ?? .zero) {
            return .restored
        }
        if cursor < account.horizon {
            return .resyncNeeded
        }
        return nil
    }

    // MARK: Pushes

    /// What a server does with one pushed change: the outcome to answer, the record to write (at
    /// the version given to the decision, the next head), the loser to archive, and the
    /// idempotency entry to store for the (replica, key), all in the same transaction.
    package struct PushDecision: Hashable, Sendable {
        package var outcome: SyncPushResponse.Outcome
        package var write: SyncServerRecord?
        package var archive: SyncArchivedConflict?
        package var idempotency: SyncIdempotencyEntry?
    }

    /// Settles one change from `pusher` against the key's `current` record.
    ///
    /// A change is named by its ``SyncRecord/identity`` (its first stamp, which stamping it again
    /// keeps) and ordered by its ``SyncRecord/stamp``. The idempotency entry is the one of the
    /// change's author (its identity's replica) and key, whoever pushes it: a copy of the
    /// author's folder, or a replica pushing back what a restored server lost, pushes the
    /// author's changes, and each has its effect once.
    ///
    /// In order:
    /// 1. The entry's identity is a repeat: the recorded outcome again (the current record,
    ///    when a later one replaced it), or, with another digest, a rejection (a copied replica
    ///    reused the stamp).
    /// 2. An earlier stamp than the entry's, on a change not made on the entry's change, was
    ///    replaced by its author's later change, which the server has settled:
    ///    ``SyncPushResponse/Outcome/overtaken(_:)`` by the current record. (A change made on the
    ///    entry's change is later, whatever its stamp: one stamped again after its clock ran
    ///    ahead can have an earlier stamp than a change of its own whose answer was lost.)
    /// 3. The current record's own identity: accepted again, or rejected if the content
    ///    differs. A change the current record was made on (its base, or one it replaces) is
    ///    overtaken.
    /// 4. A stamp more than `maximumClockAhead` milliseconds after both `serverTime` and the
    ///    current record's stamp: ``SyncPushResponse/Outcome/tooFarAhead``. (A record stamped in
    ///    the server's future, by a server clock that was ahead, makes every replica that saw it
    ///    stamp after it: a change on its key stamped so is not ahead.)
    /// 5. A change made on the current record applies: its base is the record's identity, or
    ///    the record is one of the earlier changes it replaces, or there is no record and it was
    ///    made on nothing; so does a later change its author pushes over the author's own record.
    /// 6. Otherwise the change is concurrent with the record. A record pushed back to a server
    ///    that lost it (``SyncRecord/isRestoring``) is settled by stamp, whatever its policy but
    ///    `merge`: it was settled once already, and its stamp orders it after everything its
    ///    writer had seen. Otherwise its policy settles it: `lastWriterWins` by stamp;
    ///    `saveBeatsRemove` a save over a removal, a removal loses to a save, two saves or two
    ///    removals by stamp; `compareAndSet` loses; `merge` asks the replica to merge. A loser
    ///    is archived, except a removal that lost to a removal.
    ///
    /// - Parameters:
    ///   - change: The change, as pushed.
    ///   - pusher: The replica that pushed it.
    ///   - current: The key's record, if any.
    ///   - entry: The idempotency entry of the change's author and key, if any.
    ///   - version: The version a write takes: the account's head plus one. A loser archived
    ///     without a write is archived at it too; only a write bumps the head.
    ///   - serverTime: The server's clock, in milliseconds since 1970.
    ///   - maximumClockAhead: How far in the future a stamp may be, in milliseconds.
    /// - Returns: What to answer, write, archive and record.
    package static func decide(
        _ change: SyncRecord,
        from pusher: ReplicaID,
        current: SyncServerRecord?,
        entry: SyncIdempotencyEntry?,
        version: ServerVersion,
        serverTime: Int64,
        maximumClockAhead: Int64 = defaultMaximumClockAhead
    ) -> PushDecision {
        let digest = digest(of: change)
        let identity = change.identity
        if let entry, entry.identity == identity {
            guard entry.digest == digest else {
                return PushDecision(outcome: .rejected(reusedStamp(change, by: pusher)))
            }
            return PushDecision(outcome: replay(entry.outcome, of: change, current: current))
        }
        // A change made on the entry's change is later whatever its stamp: stamped again after a
        // clock ran ahead, it can come before a change of its own whose answer it never heard.
        if let entry, change.stamp < entry.stamp, !change.isMade(on: entry.identity) {
            return PushDecision(outcome: current.map { .overtaken($0.record) } ?? .superseded)
        }
        if let record = current?.record {
            if record.identity == identity {
                guard Self.digest(of: record) == digest else {
                    return PushDecision(outcome: .rejected(reusedStamp(change, by: pusher)))
                }
                let version = current?.version ?? version
                return PushDecision(
                    outcome: .accepted(version), idempotency: recording(change, digest, .accepted(version)))
            }
            if record.isMade(on: identity) {
                return PushDecision(outcome: .overtaken(record))
            }
        }
        // A record stamped in the server's future (a server clock that was ahead, then
        // corrected) is after the server's time; a change stamped after it is not ahead of it.
        let reference = max(serverTime, current?.record.stamp.milliseconds ?? serverTime)
        if change.stamp.milliseconds > reference + maximumClockAhead {
            return PushDecision(outcome: .tooFarAhead)
        }
        var written = change
        written.version = version
        written.isRestoring = false
        let apply = PushDecision(
            outcome: .accepted(version), write: SyncServerRecord(record: written, writer: pusher),
            idempotency: recording(change, digest, .accepted(version)))
        guard let current else {
            // Made on a record the key no longer has (its removal was collected): a compare
            // fails, a merge merges with absence. A record pushed back after a restore applies.
            if change.base != nil, change.policy == .compareAndSet, !change.isRestoring {
                return lose(change, from: pusher, to: nil, digest: digest, version: version)
            }
            if change.base != nil, change.policy == .merge {
                return PushDecision(outcome: .mergeNeeded(nil))
            }
            return apply
        }
        let record = current.record
        let author = identity.replica
        let madeOnCurrent =
            change.isMade(on: record.identity)
            || (pusher == author && record.identity.replica == author && record.stamp < change.stamp)
        if madeOnCurrent {
            return apply
        }
        if change.isRestoring && change.policy != .merge {
            return byStamp(change, from: pusher, over: current, digest: digest, version: version, apply: apply)
        }
        switch change.policy {
        case .lastWriterWins:
            return byStamp(change, from: pusher, over: current, digest: digest, version: version, apply: apply)
        case .saveBeatsRemove:
            switch (change.isRemoval, record.isRemoval) {
            case (false, true):
                return displace(current, by: change, apply: apply)
            case (true, false):
                return lose(change, from: pusher, to: record, digest: digest, version: version)
            default:
                return byStamp(change, from: pusher, over: current, digest: digest, version: version, apply: apply)
            }
        case .compareAndSet:
            return lose(change, from: pusher, to: record, digest: digest, version: version)
        case .merge:
            return PushDecision(outcome: .mergeNeeded(record))
        }
    }

    /// The idempotency entry that records `change` settled as `outcome`.
    private static func recording(
        _ change: SyncRecord,
        _ digest: String,
        _ outcome: SyncRecordedOutcome
    ) -> SyncIdempotencyEntry {
        SyncIdempotencyEntry(stamp: change.stamp, identity: change.identity, digest: digest, outcome: outcome)
    }

    /// The later stamp wins; the loser is archived, unless both are removals (then the earlier
    /// removal is settled without an archive: nothing it said is lost).
    private static func byStamp(
        _ change: SyncRecord,
        from pusher: ReplicaID,
        over current: SyncServerRecord,
        digest: String,
        version: ServerVersion,
        apply: PushDecision
    ) -> PushDecision {
        let record = current.record
        let bothRemovals = change.isRemoval && record.isRemoval
        if change.stamp > record.stamp {
            return bothRemovals ? apply : displace(current, by: change, apply: apply)
        }
        if bothRemovals {
            return PushDecision(
                outcome: .overtaken(record), idempotency: recording(change, digest, .accepted(current.version)))
        }
        return lose(change, from: pusher, to: record, digest: digest, version: version)
    }

    /// `apply`, archiving the record it replaces as a loser.
    private static func displace(
        _ current: SyncServerRecord,
        by change: SyncRecord,
        apply: PushDecision
    ) -> PushDecision {
        var decision = apply
        let loser = current.record
        decision.archive = SyncArchivedConflict(
            conflict: SyncConflict(
                key: loser.key, value: loser.value, stamp: loser.identity, cause: .lost, winner: change.identity),
            writer: current.writer, version: apply.write?.version ?? .zero, isPulled: true)
        return decision
    }

    /// The change loses to `winner` (`nil`: the key has no record) and is archived.
    private static func lose(
        _ change: SyncRecord,
        from pusher: ReplicaID,
        to winner: SyncRecord?,
        digest: String,
        version: ServerVersion
    ) -> PushDecision {
        PushDecision(
            outcome: .lost(winner),
            archive: SyncArchivedConflict(
                conflict: SyncConflict(
                    key: change.key, value: change.value, stamp: change.identity, cause: .lost,
                    winner: winner?.identity),
                writer: pusher, version: version, isPulled: false),
            idempotency: recording(change, digest, .lost))
    }

    /// A recorded outcome, answered again to a repeat.
    private static func replay(
        _ outcome: SyncRecordedOutcome,
        of change: SyncRecord,
        current: SyncServerRecord?
    ) -> SyncPushResponse.Outcome {
        switch outcome {
        case .accepted(let version):
            guard let current, current.record.identity != change.identity else {
                return .accepted(current?.version ?? version)
            }
            return .overtaken(current.record)
        case .lost:
            return .lost(current?.record)
        case .rejected(let reason):
            return .rejected(reason)
        }
    }

    private static func reusedStamp(_ change: SyncRecord, by pusher: ReplicaID) -> String {
        "replica \(pusher) sent stamp \(change.stamp) for key '\(change.key)' with other contents than before:"
            + " a copied replica directory that did not make itself a new identity"
    }

    /// Whether the decision writes a record, which takes the version given to
    /// ``decide(_:from:current:entry:version:serverTime:maximumClockAhead:)``: the account's head
    /// must then be bumped to it.
    package static func bumpsHead(_ decision: PushDecision) -> Bool {
        decision.write != nil
    }

    /// A short digest of everything a change says (its value, removal, base, the changes it
    /// replaces, and its policy; not its stamp, nor whether it is pushed back after a restore),
    /// to tell
    /// a repeat from another change that reused the stamp: FNV-1a, 64 bits, as 16 hex digits.
    package static func digest(of change: SyncRecord) -> String {
        var hash = FNV1a()
        hash.mix(change.policy.rawValue.utf8)
        hash.mix([0, change.isRemoval ? 1 : 2])
        hash.mix(withUnsafeBytes(of: UInt64(change.value?.count ?? 0).littleEndian, Array.init))
        hash.mix(change.value ?? Data())
        hash.mix([0])
        hash.mix((change.base?.description ?? "").utf8)
        for replaced in change.replaces {
            hash.mix([0])
            hash.mix(replaced.description.utf8)
        }
        return hash.hex
    }

    // MARK: Pulls

    /// A page of a pull: the records after the cursor (given sorted by version, at most `limit`
    /// of them), where the next page starts, and whether it reached the head.
    package static func page(
        of records: [SyncRecord],
        limit: Int,
        head: ServerVersion
    ) -> (cursor: ServerVersion, isComplete: Bool) {
        guard records.count >= limit, let last = records.last?.version, last < head else {
            return (head, true)
        }
        return (last, false)
    }

    /// The replica's progress after an answer: its cursor as the request said it, and the
    /// highest version the answer gave it.
    package static func progress(
        _ progress: SyncReplicaProgress?,
        cursor: ServerVersion,
        given versions: some Sequence<ServerVersion>
    ) -> SyncReplicaProgress {
        var next = progress ?? SyncReplicaProgress()
        next.cursor = max(next.cursor, cursor)
        next.seen = versions.reduce(next.seen, max)
        return next
    }

    /// The versions a push answer gives the replica.
    package static func versions(in outcomes: [SyncPushResponse.Outcome]) -> [ServerVersion] {
        outcomes.compactMap { outcome in
            switch outcome {
            case .accepted(let version): version
            case .overtaken(let record): record.version
            case .lost(let record), .mergeNeeded(let record): record?.version
            case .superseded, .tooFarAhead, .rejected: nil
            }
        }
    }

    // MARK: Collecting removals

    /// Whether a removal may be collected: it is at or below every known replica's cursor (all
    /// of them pulled it), and its stamp is not after `cutoff` (milliseconds since 1970).
    package static func isCollectable(
        _ record: SyncRecord,
        lowestCursor: ServerVersion?,
        olderThan cutoff: Int64
    ) -> Bool {
        guard record.isRemoval, let version = record.version else { return false }
        return version <= (lowestCursor ?? version) && record.stamp.milliseconds <= cutoff
    }
}
