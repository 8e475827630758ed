public import Foundation

/// A change that lost, kept with its value until someone resolves it: nothing a user wrote is
/// dropped without a trace.
///
/// The server archives every change that loses to another, whatever the policy, and keeps it
/// until it is resolved (``InMemorySyncServer/archivedConflicts(for:)``). A replica archives, in
/// its own directory, each of its own changes that lost (on the push's answer, or later, on the
/// pull that brings the winner), its edits from before its first pull that lost to the server's
/// values, and its differences when the server starts a new epoch. ``SyncReplica/conflicts()``
/// yields each as it is archived, ``SyncReplica/archivedConflicts()`` lists them, and
/// ``SyncReplica/resolve(_:)`` removes one.
///
/// ```swift
/// for conflict in try await replica.archivedConflicts() {
///     let lost = try conflict.value.map { try JSONDecoder().decode(String.self, from: $0) }
///     print("\(conflict.key): \(lost ?? "a removal") lost (\(conflict.cause))")
///     try await replica.resolve(conflict)
/// }
/// ```
public struct SyncConflict: Hashable, Sendable, Codable {
    /// Why a change was archived.
    ///
    /// ```swift
    /// if conflict.cause == .firstSync { print("edited before the first sync") }
    /// ```
    public enum Cause: String, Hashable, Sendable, Codable {
        /// Another change won: a later stamp, a save over an unseen remove, or a record the
        /// change (`compareAndSet`) was not made on.
        case lost
        /// An edit made before the replica's first complete pull lost to the server's value
        /// (``SyncOptions/FirstSync/keepRemote``), or the server's value lost to it
        /// (``SyncOptions/FirstSync/keepLocal``).
        case firstSync
        /// The server started a new epoch, and the replica's record or pending change differed
        /// from the server's.
        case newEpoch
        /// The server refused the change for good (see ``SyncStatus/rejectedChanges``).
        case rejected
    }

    /// The key of the change.
    ///
    /// ```swift
    /// let key = conflict.key   // "theme"
    /// ```
    public var key: String
    /// The change's value as the store encodes it (JSON for ``SyncReplica/store(_:as:policy:)``),
    /// or `nil` for a removal.
    ///
    /// ```swift
    /// let lost = try conflict.value.map { try JSONDecoder().decode(String.self, from: $0) }
    /// ```
    public var value: Data?
    /// The change's stamp: its first, if it was stamped again (its ``SyncRecord/identity``).
    ///
    /// ```swift
    /// let when = conflict.stamp.milliseconds
    /// ```
    public var stamp: HybridTimestamp
    /// Why it was archived.
    ///
    /// ```swift
    /// if conflict.cause == .newEpoch { print("the server was reset") }
    /// ```
    public var cause: Cause
    /// The identity of the record it lost to, when known.
    ///
    /// ```swift
    /// let lostTo = conflict.winner?.replica
    /// ```
    public var winner: HybridTimestamp?
    /// The server's words, for a rejected change.
    ///
    /// ```swift
    /// print(conflict.reason ?? "lost to a concurrent change")
    /// ```
    public var reason: String?

    /// A conflict from its parts.
    ///
    /// ```swift
    /// let conflict = SyncConflict(key: "theme", value: data, stamp: stamp, cause: .lost, winner: other)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key of the change.
    ///   - value: The change's value, or `nil` for a removal.
    ///   - stamp: The change's stamp.
    ///   - cause: Why it was archived.
    ///   - winner: The stamp of the record it lost to, when known.
    ///   - reason: The server's words, for a rejected change.
    public init(
        key: String,
        value: Data?,
        stamp: HybridTimestamp,
        cause: Cause,
        winner: HybridTimestamp? = nil,
        reason: String? = nil
    ) {
        self.key = key
        self.value = value
        self.stamp = stamp
        self.cause = cause
        self.winner = winner
        self.reason = reason
    }
}
