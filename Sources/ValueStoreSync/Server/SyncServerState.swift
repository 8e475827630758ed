package import Foundation

// The state a sync server keeps, shaped as the tables of the PostgreSQL server will be: per
// account a row, per key a record, per (replica, key) an idempotency entry, per replica its
// progress, and an archive of losers. `InMemorySyncServer` holds it in memory; the rules that
// change it are pure functions (`SyncServerRules`), so every server makes the same decisions.

/// The account's row: its epoch, its head and its horizon.
package struct SyncAccountRow: Hashable, Sendable {
    /// Changes only by a deliberate reset (`startNewEpoch`); a restore from a backup keeps it.
    package var epoch: UUID
    /// The version of the latest write; every write takes the next one, under the row's lock.
    package var head: ServerVersion
    /// Removals at or below this version may have been collected.
    package var horizon: ServerVersion

    package init(epoch: UUID, head: ServerVersion = .zero, horizon: ServerVersion = .zero) {
        self.epoch = epoch
        self.head = head
        self.horizon = horizon
    }
}

/// A key's record: the latest change that applied, its version (the head when it committed),
/// and the replica that pushed it.
package struct SyncServerRecord: Hashable, Sendable, Codable {
    /// The record as pulled, its `version` set.
    package var record: SyncRecord
    /// The replica whose push wrote it.
    package var writer: ReplicaID

    package var version: ServerVersion { record.version ?? .zero }
}

/// What the server keeps of the last change an author (a replica, by its stamps) made to a key,
/// so a repeat has its effect once, whoever pushes it.
package struct SyncIdempotencyEntry: Hashable, Sendable, Codable {
    /// The stamp of the author's last settled change to the key, as pushed: what orders it.
    package var stamp: HybridTimestamp
    /// The change's identity (its first stamp): what a repeat has.
    package var identity: HybridTimestamp
    /// The change's digest (`SyncServerRules.digest(of:)`): a repeat with another digest is a
    /// copied replica.
    package var digest: String
    /// How it was settled.
    package var outcome: SyncRecordedOutcome
}

/// How a change was settled, as its idempotency entry records it.
package enum SyncRecordedOutcome: Hashable, Sendable, Codable {
    /// It applied, at this version (or settled a removal against a later removal).
    case accepted(ServerVersion)
    /// It lost and was archived.
    case lost
    /// It was refused for good.
    case rejected(String)
}

/// What the server knows of one replica: how far it pulled, and the highest version it was given.
package struct SyncReplicaProgress: Hashable, Sendable {
    /// The cursor the replica last said it had: removals at or below every replica's cursor
    /// may be collected.
    package var cursor: ServerVersion
    /// The highest version any answer gave it: a replica that says it saw more was served by a
    /// server whose history this one lost (`SyncRefusal.restored`).
    package var seen: ServerVersion

    package init(cursor: ServerVersion = .zero, seen: ServerVersion = .zero) {
        self.cursor = cursor
        self.seen = seen
    }

    /// Raises the cursor and what was seen to `other`'s where they are higher: progress known
    /// from two sources, never lowered.
    ///
    /// ```swift
    /// known.raise(to: recorded)
    /// ```
    package mutating func raise(to other: SyncReplicaProgress) {
        cursor = max(cursor, other.cursor)
        seen = max(seen, other.seen)
    }
}

/// A loser in the server's archive.
package struct SyncArchivedConflict: Hashable, Sendable, Codable {
    package var conflict: SyncConflict
    /// The replica whose push wrote the loser.
    package var writer: ReplicaID
    /// The version of the write that displaced it; for a change that lost as it was pushed, the
    /// version the next write takes.
    package var version: ServerVersion
    /// Whether the writer's pulls bring it to the writer's own archive: a record that a later
    /// change displaced. A change that lost as it was pushed is not: its push's answer told the
    /// writer, which archived it then.
    package var isPulled: Bool
}

/// One author's key, for the idempotency entries.
package struct SyncReplicaKey: Hashable, Sendable {
    package var replica: ReplicaID
    package var key: String

    package init(replica: ReplicaID, key: String) {
        self.replica = replica
        self.key = key
    }
}

/// Everything a server keeps for one account.
package struct SyncAccountState: Hashable, Sendable {
    package var row: SyncAccountRow
    package var records: [String: SyncServerRecord] = [:]
    package var idempotency: [SyncReplicaKey: SyncIdempotencyEntry] = [:]
    package var progress: [ReplicaID: SyncReplicaProgress] = [:]
    package var archive: [SyncArchivedConflict] = []

    package init(row: SyncAccountRow) {
        self.row = row
    }
}
