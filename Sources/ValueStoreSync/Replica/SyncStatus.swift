/// Where a replica stands: what waits to be pushed, what the server refused, what lost, the last
/// error, and what it is doing.
///
/// ```swift
/// let status = replica.status
/// if status.pendingChanges > 0 { print("\(status.pendingChanges) changes not yet on the server") }
/// if let error = status.lastError { print("the last sync failed: \(error)") }
/// ```
public struct SyncStatus: Sendable {
    /// What a replica is doing.
    ///
    /// ```swift
    /// if replica.status.phase == .resyncing { showSpinner() }
    /// ```
    public enum Phase: Hashable, Sendable {
        /// Nothing in flight.
        case idle
        /// Pulling the whole state: the first sync, or after a refusal.
        case resyncing
        /// Sending changes.
        case pushing
        /// Pulling records.
        case pulling
        /// Waiting after a failure before ``SyncReplica/run()`` tries again.
        case backingOff
    }

    /// Local changes not yet acknowledged by the server: one per key at most, the latest.
    ///
    /// ```swift
    /// let unsent = replica.status.pendingChanges
    /// ```
    public var pendingChanges: Int
    /// Changes the server refused for good, with their values, until resolved with
    /// ``SyncReplica/resolve(_:)``. Nothing else drops a change; the key's value went back to
    /// the server's.
    ///
    /// ```swift
    /// for refused in replica.status.rejectedChanges { print(refused.key, refused.reason ?? "") }
    /// ```
    public var rejectedChanges: [SyncConflict]
    /// Changes in the replica's archive (``SyncReplica/archivedConflicts()``), until resolved.
    ///
    /// ```swift
    /// let badge = replica.status.unresolvedConflicts
    /// ```
    public var unresolvedConflicts: Int
    /// Why the last sync failed (the server could not be reached, say); `nil` once one succeeds.
    /// Nothing pending was dropped.
    ///
    /// ```swift
    /// if let error = replica.status.lastError { print("offline: \(error)") }
    /// ```
    public var lastError: (any Error)?
    /// What the replica is doing.
    ///
    /// ```swift
    /// let busy = replica.status.phase != .idle
    /// ```
    public var phase: Phase

    /// A status from its parts.
    ///
    /// ```swift
    /// let idle = SyncStatus(
    ///     pendingChanges: 0, rejectedChanges: [], unresolvedConflicts: 0, lastError: nil, phase: .idle)
    /// ```
    ///
    /// - Parameters:
    ///   - pendingChanges: Local changes not yet acknowledged.
    ///   - rejectedChanges: Changes the server refused for good.
    ///   - unresolvedConflicts: Changes in the replica's archive.
    ///   - lastError: Why the last sync failed, if it did.
    ///   - phase: What the replica is doing.
    public init(
        pendingChanges: Int,
        rejectedChanges: [SyncConflict],
        unresolvedConflicts: Int,
        lastError: (any Error)?,
        phase: Phase
    ) {
        self.pendingChanges = pendingChanges
        self.rejectedChanges = rejectedChanges
        self.unresolvedConflicts = unresolvedConflicts
        self.lastError = lastError
        self.phase = phase
    }
}
