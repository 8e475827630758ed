public import Foundation

/// Changes a replica sends to the server, in one request.
///
/// Each change is applied, or not, on its own, and idempotently: the server keys it by the
/// replica, its key and its stamp, so a request sent twice, or sent again after its answer was
/// lost, has its effect once. The request also carries what the replica has seen, so the server
/// can tell that it was restored from a backup (``SyncRefusal/restored``) or has a new epoch.
///
/// ```swift
/// let request = SyncPushRequest(
///     account: "user-42", replica: id, epoch: epoch, seen: seen, cursor: cursor, changes: [change])
/// let response = try await remote.push(request)
/// ```
public struct SyncPushRequest: Hashable, Sendable, Codable {
    /// The account whose records change.
    ///
    /// ```swift
    /// let account = request.account   // "user-42"
    /// ```
    public var account: String
    /// The replica that sends the changes.
    ///
    /// ```swift
    /// let pusher = request.replica
    /// ```
    public var replica: ReplicaID
    /// The account's epoch as the replica knows it; `nil` before its first pull.
    ///
    /// ```swift
    /// let epoch = request.epoch
    /// ```
    public var epoch: UUID?
    /// The highest server version the replica has been given, in any answer: more than the
    /// server remembers giving it means the server lost history (or, for a copied folder's new
    /// identity, that the server never served it), and is answered ``SyncRefusal/restored``.
    ///
    /// ```swift
    /// let highest = request.seen
    /// ```
    public var seen: ServerVersion
    /// How far the replica has pulled: the server refuses a replica below its horizon.
    ///
    /// ```swift
    /// let pulledTo = request.cursor
    /// ```
    public var cursor: ServerVersion
    /// The changes, at most one per key.
    ///
    /// ```swift
    /// let keys = request.changes.map(\.key)
    /// ```
    public var changes: [SyncRecord]

    /// A request from its parts.
    ///
    /// ```swift
    /// let request = SyncPushRequest(
    ///     account: "user-42", replica: id, epoch: epoch, seen: seen, cursor: cursor, changes: [change])
    /// ```
    ///
    /// - Parameters:
    ///   - account: The account whose records change.
    ///   - replica: The replica that sends the changes.
    ///   - epoch: The epoch as the replica knows it.
    ///   - seen: The highest server version the replica has been given.
    ///   - cursor: How far the replica has pulled.
    ///   - changes: The changes, at most one per key.
    public init(
        account: String,
        replica: ReplicaID,
        epoch: UUID?,
        seen: ServerVersion,
        cursor: ServerVersion,
        changes: [SyncRecord]
    ) {
        self.account = account
        self.replica = replica
        self.epoch = epoch
        self.seen = seen
        self.cursor = cursor
        self.changes = changes
    }
}
