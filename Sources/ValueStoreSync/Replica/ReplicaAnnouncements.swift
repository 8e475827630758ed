import Synchronization
import ValueStore

/// What the replica's streams are yet to hear: taken from ``ReplicaState`` in its lock, told
/// after it.
///
/// A yield wakes the consumer's task and takes that task's own lock, while a cancelled
/// consumer's task holds its lock as its stream's termination takes the replica's lock to leave:
/// yielding inside the replica's lock could deadlock the two.
struct ReplicaAnnouncements: Sendable {
    var status: SyncStatus?
    var statusListeners: [AsyncStream<SyncStatus>.Continuation] = []
    var conflicts: [SyncConflict] = []
    var conflictListeners: [AsyncStream<SyncConflict>.Continuation] = []
    var doorbells: [AsyncStream<Void>.Continuation] = []

    func deliver() {
        if let status {
            for listener in statusListeners {
                listener.yield(status)
            }
        }
        for conflict in conflicts {
            for listener in conflictListeners {
                listener.yield(conflict)
            }
        }
        for doorbell in doorbells {
            doorbell.yield()
        }
    }
}

extension ReplicaState {
    /// Whether a status, a conflict or a ring waits to be told.
    var hasAnnouncements: Bool {
        statusIsDue || !dueConflicts.isEmpty || bellIsDue
    }

    /// Takes what waits to be told, with the listeners to tell.
    mutating func takeAnnouncements() -> ReplicaAnnouncements {
        defer {
            statusIsDue = false
            dueConflicts = []
            bellIsDue = false
        }
        return ReplicaAnnouncements(
            status: statusIsDue ? status : nil,
            statusListeners: statusIsDue ? statusListeners.all : [],
            conflicts: dueConflicts,
            conflictListeners: dueConflicts.isEmpty ? [] : conflictListeners.all,
            doorbells: bellIsDue ? Array(doorbells.values) : [])
    }
}

extension SyncReplica {
    /// Runs `body` in the replica's lock, then tells the streams what it announced (with
    /// ``ReplicaState/publish(conflicts:)`` or ``ReplicaState/ring(push:pull:)``), outside the
    /// lock.
    func withState<Result: Sendable>(_ body: (inout ReplicaState) throws -> Result) rethrows -> Result {
        let (result, due) = try state.withLock { state in
            (try body(&state), state.hasAnnouncements)
        }
        if due {
            announce()
        }
        return result
    }

    /// Tells the streams what waits to be told, one announcement at a time, so that the newest
    /// status is always the last a stream hears.
    func announce() {
        announcing.withLock { _ in
            state.withLock { $0.takeAnnouncements() }.deliver()
        }
    }
}
