/// How a synced key's changes from two devices are settled, when one was made without seeing the
/// other.
///
/// ```swift
/// let theme = replica.store("theme", as: Theme.self)   // last writer wins
/// let draft = replica.store("draft", as: String.self, policy: .saveBeatsRemove)
/// let quota = replica.store("quota", as: Int.self, policy: .compareAndSet)
/// let tags = replica.store("tags", as: Set<String>.self,
///                          policy: .merge { base, local, remote in (local ?? []).union(remote ?? []) })
/// ```
///
/// A change made after seeing another always applies over it, whatever the policy; the policy
/// decides only between concurrent changes, on the server, and every loser is archived (see
/// ``SyncConflict``). Only `.compareAndSet` and `.merge` make a cross-device `update` atomic: under
/// the other two, two devices that update a key at once each read the same value, and one of the
/// updates is archived, not applied.
public struct SyncPolicy<Value: Sendable>: Sendable {
    /// Merges a key's three versions: the one both sides started from, the local one and the
    /// server's; `nil` is absence. The result is pushed as a change made on the server's record.
    ///
    /// ```swift
    /// let union: SyncPolicy<Set<String>>.Merge = { base, local, remote in (local ?? []).union(remote ?? []) }
    /// ```
    public typealias Merge =
        @Sendable (_ base: Value?, _ local: Value?, _ remote: Value?) -> Value?

    /// How the server settles the key's changes.
    ///
    /// ```swift
    /// if policy.kind == .merge { print("merged on the device") }
    /// ```
    public var kind: SyncRecord.Policy
    /// The merge, for ``merge(_:)``.
    ///
    /// ```swift
    /// let merged = policy.merge?(nil, ["a"], ["b"])   // ["a", "b"] for a union
    /// ```
    public var merge: Merge?

    /// A policy from its parts.
    ///
    /// ```swift
    /// let policy = SyncPolicy<Int>(kind: .compareAndSet, merge: nil)
    /// ```
    ///
    /// - Parameters:
    ///   - kind: How the server settles the key's changes.
    ///   - merge: The merge, for ``SyncRecord/Policy/merge``; ignored for the other kinds.
    public init(kind: SyncRecord.Policy, merge: Merge?) {
        self.kind = kind
        self.merge = merge
    }

    /// The later stamp wins, save or remove: the default.
    ///
    /// ```swift
    /// let theme = replica.store("theme", as: Theme.self, policy: .lastWriterWins)
    /// ```
    public static var lastWriterWins: Self { Self(kind: .lastWriterWins, merge: nil) }

    /// A removal wins only over the record it was made on: a save never disappears because
    /// another device removed an older value.
    ///
    /// ```swift
    /// let draft = replica.store("draft", as: String.self, policy: .saveBeatsRemove)
    /// ```
    public static var saveBeatsRemove: Self { Self(kind: .saveBeatsRemove, merge: nil) }

    /// A change applies only over the record it was made on; otherwise it is archived and the
    /// local value becomes the server's. So an `update` is atomic across devices.
    ///
    /// ```swift
    /// let quota = replica.store("quota", as: Int.self, policy: .compareAndSet)
    /// ```
    public static var compareAndSet: Self { Self(kind: .compareAndSet, merge: nil) }

    /// Concurrent changes are merged on the device, with `merge`, and the result is pushed again.
    ///
    /// ```swift
    /// let tags = replica.store("tags", as: Set<String>.self,
    ///                          policy: .merge { base, local, remote in (local ?? []).union(remote ?? []) })
    /// ```
    ///
    /// A key changed on another device while this process has not made its store yet keeps its
    /// pending change, unmerged and never overwritten, until the store is made.
    ///
    /// - Parameter merge: Merges the base, the local and the server's value.
    /// - Returns: The policy.
    public static func merge(_ merge: @escaping Merge) -> Self {
        Self(kind: .merge, merge: merge)
    }
}
