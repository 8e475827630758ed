public import Foundation

/// A replica's request for the records committed after its cursor, one page at a time.
///
/// ```swift
/// let request = SyncPullRequest(
///     account: "user-42", replica: id, epoch: epoch, cursor: cursor, seen: seen, limit: 500,
///     isResync: false)
/// let page = try await remote.pull(request)
/// ```
public struct SyncPullRequest: Hashable, Sendable, Codable {
    /// The account whose records to pull.
    ///
    /// ```swift
    /// let account = request.account   // "user-42"
    /// ```
    public var account: String
    /// The replica that pulls.
    ///
    /// ```swift
    /// let asker = request.replica
    /// ```
    public var replica: ReplicaID
    /// The account's epoch as the replica knows it; `nil` to take whatever epoch the server has
    /// (a first pull, or the pull that follows ``SyncRefusal/epochChanged``).
    ///
    /// ```swift
    /// let any = request.epoch == nil
    /// ```
    public var epoch: UUID?
    /// The version the replica has pulled up to: the page holds records committed after it.
    ///
    /// ```swift
    /// let after = request.cursor
    /// ```
    public var cursor: ServerVersion
    /// The highest server version the replica has been given, in any answer (see
    /// ``SyncPushRequest/seen``).
    ///
    /// ```swift
    /// let highest = request.seen
    /// ```
    public var seen: ServerVersion
    /// The most records in the page.
    ///
    /// ```swift
    /// let pageSize = request.limit
    /// ```
    public var limit: Int
    /// Whether this is part of a whole-state pull (from version zero), which the server answers
    /// without checking ``seen`` or its horizon.
    ///
    /// ```swift
    /// if request.isResync { print("a whole-state pull") }
    /// ```
    public var isResync: Bool
    /// The page brings the replica's archived changes (``SyncPullResponse/conflicts``) archived
    /// after this version: the replica's cursor before a whole-state pull, so none comes twice;
    /// `nil` for ``cursor``.
    ///
    /// ```swift
    /// let since = request.archivedAfter ?? request.cursor
    /// ```
    public var archivedAfter: ServerVersion?

    /// A request from its parts.
    ///
    /// ```swift
    /// let request = SyncPullRequest(
    ///     account: "user-42", replica: id, epoch: nil, cursor: .zero, seen: .zero, limit: 500,
    ///     isResync: true)
    /// ```
    ///
    /// - Parameters:
    ///   - account: The account whose records to pull.
    ///   - replica: The replica that pulls.
    ///   - epoch: The epoch as the replica knows it, or `nil`.
    ///   - cursor: The version the replica has pulled up to.
    ///   - seen: The highest server version the replica has been given.
    ///   - limit: The most records in the page.
    ///   - isResync: Whether this is part of a whole-state pull.
    ///   - archivedAfter: The page brings the replica's changes archived after this version;
    ///     `nil` for `cursor`.
    public init(
        account: String,
        replica: ReplicaID,
        epoch: UUID?,
        cursor: ServerVersion,
        seen: ServerVersion,
        limit: Int,
        isResync: Bool,
        archivedAfter: ServerVersion? = nil
    ) {
        self.account = account
        self.replica = replica
        self.epoch = epoch
        self.cursor = cursor
        self.seen = seen
        self.limit = limit
        self.isResync = isResync
        self.archivedAfter = archivedAfter
    }
}
