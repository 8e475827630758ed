public import Foundation

/// One key's value (or its removal) as it travels between a replica and the server: the change a
/// replica pushes, and the record a replica pulls.
///
/// The value is the bytes the replica's store encoded (JSON for ``SyncReplica/store(_:as:policy:)``),
/// so the server never decodes it. A removal is a stamped tombstone: `value` is `nil`. The
/// `base` names the record the change was made on, by its stamp: the server decides
/// ``Policy/saveBeatsRemove``, ``Policy/compareAndSet`` and ``Policy/merge`` with it, and a
/// stamp, unlike a version, names the same record after a server was restored from a backup.
///
/// ```swift
/// let change = SyncRecord(
///     key: "theme", value: Data(#""dark""#.utf8),
///     stamp: HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 0, replica: ReplicaID("a")),
///     base: nil, policy: .lastWriterWins)
/// ```
public struct SyncRecord: Hashable, Sendable, Codable {
    /// How the server settles a change against a record the change's replica had not seen.
    ///
    /// ```swift
    /// let policy = SyncRecord.Policy.saveBeatsRemove
    /// ```
    public enum Policy: String, Hashable, Sendable, Codable, CaseIterable {
        /// The later stamp wins, save or remove.
        case lastWriterWins
        /// A remove wins only over the record it was made on; a save wins over a remove it had
        /// not seen, and over a save by stamp.
        case saveBeatsRemove
        /// The change applies only over the record it was made on; otherwise it loses.
        case compareAndSet
        /// The change applies only over the record it was made on; otherwise the server sends the
        /// current record back and the replica merges and pushes again.
        case merge
    }

    /// The key, as the replica's store names it.
    ///
    /// ```swift
    /// let key = record.key   // "theme"
    /// ```
    public var key: String
    /// The value's bytes, or `nil` for a removal.
    ///
    /// ```swift
    /// let theme = try record.value.map { try JSONDecoder().decode(String.self, from: $0) }
    /// ```
    public var value: Data?
    /// When the change was made, and by which replica: what orders it against other changes.
    ///
    /// ```swift
    /// let later = incoming.stamp > current.stamp
    /// ```
    public var stamp: HybridTimestamp
    /// The stamp the change was first given, when its replica stamped it again because the
    /// server refused it as too far in its future; `nil` otherwise. A change keeps its first
    /// stamp as its name (``identity``).
    ///
    /// ```swift
    /// let stampedAgain = record.origin != nil
    /// ```
    public var origin: HybridTimestamp?
    /// The identity of the record the change was made on; `nil` when it was made on nothing.
    ///
    /// ```swift
    /// let madeOnCurrent = change.base == current.identity
    /// ```
    public var base: HybridTimestamp?
    /// The identities of the replica's earlier changes to the key that this one replaces, made
    /// since ``base`` and not yet acknowledged: the change was made on each of them too, so it
    /// applies over whichever of them reached the server (its answer was lost, or a copy of the
    /// replica's folder pushed it). The latest 16 at most.
    ///
    /// ```swift
    /// let madeOnIt = change.replaces.contains(current.identity)
    /// ```
    public var replaces: [HybridTimestamp]
    /// How the server settles the change.
    ///
    /// ```swift
    /// if record.policy == .compareAndSet { print("applies only over its base") }
    /// ```
    public var policy: Policy
    /// Whether this is a record pushed back to a server that lost it (restored from a backup):
    /// the server settles it by stamp, whatever its policy (a `merge` record is merged as
    /// ever), archiving the loser, since it was settled once already on the history the server
    /// lost.
    ///
    /// ```swift
    /// if change.isRestoring { print("settled by stamp") }
    /// ```
    public var isRestoring: Bool
    /// The server version of the record, on records the server sends; `nil` on pushed changes.
    ///
    /// ```swift
    /// let committedAt = record.version ?? .zero
    /// ```
    public var version: ServerVersion?

    /// A record from its parts.
    ///
    /// ```swift
    /// let removal = SyncRecord(key: "draft", value: nil, stamp: stamp, base: previous, policy: .saveBeatsRemove)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The value's bytes, or `nil` for a removal.
    ///   - stamp: When the change was made, and by which replica.
    ///   - origin: The stamp the change was first given, if it was stamped again.
    ///   - base: The identity of the record the change was made on, if any.
    ///   - replaces: The replica's earlier, unacknowledged changes to the key this one replaces.
    ///   - policy: How the server settles the change.
    ///   - isRestoring: Whether the record is pushed back to a server that lost it.
    ///   - version: The server version, on records the server sends.
    public init(
        key: String,
        value: Data?,
        stamp: HybridTimestamp,
        origin: HybridTimestamp? = nil,
        base: HybridTimestamp?,
        replaces: [HybridTimestamp] = [],
        policy: Policy,
        isRestoring: Bool = false,
        version: ServerVersion? = nil
    ) {
        self.key = key
        self.value = value
        self.stamp = stamp
        self.origin = origin
        self.base = base
        self.replaces = replaces
        self.policy = policy
        self.isRestoring = isRestoring
        self.version = version
    }

    /// The change's name, which stamping it again keeps: its first stamp. Bases, ``replaces`` and
    /// repeats name changes by it; the replica in it is the change's author.
    ///
    /// ```swift
    /// if current.base == change.identity { print("the current record was made on the change") }
    /// ```
    public var identity: HybridTimestamp { origin ?? stamp }

    /// Whether the record is a removal (a tombstone).
    ///
    /// ```swift
    /// if record.isRemoval { print("\(record.key) was removed") }
    /// ```
    public var isRemoval: Bool { value == nil }
}
