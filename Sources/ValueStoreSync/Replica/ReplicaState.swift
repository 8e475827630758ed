import Foundation
import ValueStore

/// A merge over the encoded values, for a key whose store this process made.
typealias EncodedMerge = @Sendable (_ base: Data?, _ local: Data?, _ remote: Data?) throws -> Data?

/// Everything a replica holds in memory, in its one lock: a copy of its durable state, which
/// changes only after a commit of that change returned, and what this process keeps beside it.
struct ReplicaState {
    /// The replica's meta, once opened.
    var meta: ReplicaMeta?
    /// The meta with the clock as it is now, past the stamps of the local changes made since
    /// the meta was last committed (which commit records only): what a commit of the meta must
    /// start from, since committing the meta sets the clock, which never goes below a stamp
    /// the replica made.
    var currentMeta: ReplicaMeta? {
        guard var meta else { return nil }
        meta.clock = clock
        return meta
    }
    /// Every synced key's record.
    var records: [String: LocalRecord] = [:]
    /// The keys whose record is a removal the server has: what a pull forgets once it is below
    /// the server's horizon. Follows ``records`` in ``settle(_:)``.
    var syncedRemovals: Set<String> = []
    /// The replica's archive of conflicts.
    var archive: [SyncConflict] = []
    /// The changes the server refused for good.
    var rejected: [SyncConflict] = []
    /// The clock, from the meta's and every record's stamps on opening.
    var clock = HybridClock()
    /// Whether the status read the folder before the replica opened it.
    var hasPeeked = false

    /// The merges of the `.merge` keys whose stores this process made.
    var merges: [String: EncodedMerge] = [:]
    /// Local writes made by this process so far.
    var writes: UInt64 = 0
    /// The latest local write of each key this process wrote.
    var lastWrite: [String: UInt64] = [:]
    /// Each pending key, with the local write that made it pending (0: before this process), so
    /// that ``SyncReplica/waitUntilPushed()`` knows which changes it waits for.
    var pendingSince: [String: UInt64] = [:]
    /// The local write of each change the server rejected, in order.
    var rejections: [UInt64] = []
    /// How many of ``rejections`` a wait has thrown for: a wait reports the later ones, even
    /// those from before it started.
    var reportedRejections = 0

    var lastError: (any Error)?
    var phase = SyncStatus.Phase.idle

    /// Streams of ``SyncReplica/statusUpdates()`` and ``SyncReplica/conflicts()``.
    var statusListeners = StreamListeners<SyncStatus>()
    var conflictListeners = StreamListeners<SyncConflict>()
    /// Each key's stores' change signals.
    var keyChanges: [String: ChangeBroadcaster] = [:]

    /// What ``SyncReplica/run()`` was asked to do, and the doorbell of each run, by its number:
    /// a ring wakes every run, and the first to wake takes what is wanted. (With one doorbell, a
    /// second run took it, and left the first deaf once it ended.)
    var wants = Wants()
    var doorbells: [Int: AsyncStream<Void>.Continuation] = [:]
    var runs = 0
    /// The runs whose remote's pokes stream is alive.
    var alivePokes: Set<Int> = []
    var pokesAlive: Bool { !alivePokes.isEmpty }

    struct Wants {
        var push = false
        var pull = false
        /// The highest head the echoes of this replica's own pushes reached: a pull is wanted
        /// only if the cursor is still below it when the sync starts (the push's answer, applied,
        /// moves the cursor past its own versions).
        var echoed: ServerVersion?

        /// Whether a sync that starts with `cursor` pulls.
        func pulls(at cursor: ServerVersion) -> Bool {
            pull || echoed.map { cursor < $0 } ?? false
        }
    }

    var status: SyncStatus {
        SyncStatus(
            pendingChanges: pendingSince.count, rejectedChanges: rejected, unresolvedConflicts: archive.count,
            lastError: lastError, phase: phase)
    }

    /// Whether the status streams are yet to hear the status, the conflict streams these
    /// conflicts, and the doorbell a ring: see ``ReplicaAnnouncements``.
    var statusIsDue = false
    var dueConflicts: [SyncConflict] = []
    var bellIsDue = false

    /// Has every status stream told the status, and every conflict stream `conflicts`, once
    /// the lock is released (inside ``SyncReplica/withState(_:)``).
    mutating func publish(conflicts: [SyncConflict] = []) {
        statusIsDue = true
        dueConflicts += conflicts
    }

    /// Asks the running ``SyncReplica/run()``, if any, to push or pull; its doorbell rings once
    /// the lock is released (inside ``SyncReplica/withState(_:)``).
    mutating func ring(push: Bool = false, pull: Bool = false) {
        wants.push = wants.push || push
        wants.pull = wants.pull || pull
        bellIsDue = true
    }

    /// Asks the running ``SyncReplica/run()`` to pull for `poke`: always, unless the poke is
    /// the echo of this replica's own push (its author and head named), which asks for a pull
    /// only if the push's answer did not bring the cursor up to the head.
    mutating func ring(for poke: SyncPoke) {
        if let author = poke.author, let head = poke.head, author == meta?.id {
            wants.echoed = max(wants.echoed ?? head, head)
            bellIsDue = true
        } else {
            ring(pull: true)
        }
    }

    /// Takes in the records that changed in a commit: the pending marks follow them.
    mutating func settle(_ changed: [String: LocalRecord?]) {
        for (key, record) in changed {
            records[key] = record
            if let record, record.value == nil, !record.isPending {
                syncedRemovals.insert(key)
            } else {
                syncedRemovals.remove(key)
            }
            guard let record, record.isPending else {
                pendingSince[key] = nil
                continue
            }
            if pendingSince[key] == nil {
                pendingSince[key] = lastWrite[key] ?? 0
            }
        }
    }
}
