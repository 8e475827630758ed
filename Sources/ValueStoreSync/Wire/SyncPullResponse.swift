public import Foundation

/// One page of records committed after a replica's cursor, in commit order.
///
/// Pull again from ``cursor`` until ``isComplete``: then the replica has every record up to the
/// head the server had when it answered. A record written while the replica pages is committed
/// at a higher version than any before it, so it comes in a later page, never skipped.
///
/// ```swift
/// var cursor = ServerVersion.zero
/// repeat {
///     let page = try await remote.pull(request(from: cursor))
///     apply(page.records)
///     cursor = page.cursor
/// } while !page.isComplete
/// ```
///
/// A page names its account (``account``): a replica takes a page of another account for a
/// transport fault (a misrouted answer) and applies none of it. A page from a server that
/// predates the field has none, and is taken as before.
public struct SyncPullResponse: Hashable, Sendable, Codable {
    /// The account's epoch.
    ///
    /// ```swift
    /// let epoch = page.epoch
    /// ```
    public var epoch: UUID
    /// The server's clock, in milliseconds since 1970, when it answered.
    ///
    /// ```swift
    /// let offset = page.serverTime - Int64(Date().timeIntervalSince1970 * 1_000)
    /// ```
    public var serverTime: Int64
    /// Why the request was refused; `nil` when the page holds records.
    ///
    /// ```swift
    /// if page.refusal == .resyncNeeded { print("pull the whole state") }
    /// ```
    public var refusal: SyncRefusal?
    /// Records committed after the request's cursor, by version, removals included.
    ///
    /// ```swift
    /// for record in page.records { print(record.key, record.version ?? .zero) }
    /// ```
    public var records: [SyncRecord]
    /// Records the requesting replica pushed that a later change displaced, archived on the
    /// server, for the replica's own archive: those archived in the versions this page covers
    /// (after the request's ``SyncPullRequest/archivedAfter``), each once.
    ///
    /// ```swift
    /// let mine = page.conflicts.count
    /// ```
    public var conflicts: [SyncConflict]
    /// Where the next page starts: the replica has pulled up to here.
    ///
    /// ```swift
    /// cursor = page.cursor
    /// ```
    public var cursor: ServerVersion
    /// The account's head when the server answered.
    ///
    /// ```swift
    /// let behind = page.head.rawValue - page.cursor.rawValue
    /// ```
    public var head: ServerVersion
    /// Below this version the server may have collected removals.
    ///
    /// ```swift
    /// let mustResync = cursor < page.horizon
    /// ```
    public var horizon: ServerVersion
    /// Whether ``cursor`` reached the head.
    ///
    /// ```swift
    /// if page.isComplete { print("up to the head") }
    /// ```
    public var isComplete: Bool
    /// The account the page is of; `nil` in an answer from a server that predates it.
    ///
    /// ```swift
    /// let misrouted = page.account.map { $0 != account.id } ?? false
    /// ```
    public var account: String?

    /// A response from its parts.
    ///
    /// ```swift
    /// let page = SyncPullResponse(
    ///     epoch: epoch, serverTime: now, refusal: nil, records: records, conflicts: [],
    ///     cursor: head, head: head, horizon: .zero, isComplete: true, account: "user-42")
    /// ```
    ///
    /// - Parameters:
    ///   - epoch: The account's epoch.
    ///   - serverTime: The server's clock, in milliseconds since 1970.
    ///   - refusal: Why the request was refused, if it was.
    ///   - records: The records after the request's cursor.
    ///   - conflicts: The requesting replica's changes archived in those versions.
    ///   - cursor: Where the next page starts.
    ///   - head: The account's head.
    ///   - horizon: Below this version removals may have been collected.
    ///   - isComplete: Whether `cursor` reached the head.
    ///   - account: The account the page is of; `nil` for an answer taken as before.
    public init(
        epoch: UUID,
        serverTime: Int64,
        refusal: SyncRefusal?,
        records: [SyncRecord],
        conflicts: [SyncConflict],
        cursor: ServerVersion,
        head: ServerVersion,
        horizon: ServerVersion,
        isComplete: Bool,
        account: String? = nil
    ) {
        self.account = account
        self.epoch = epoch
        self.serverTime = serverTime
        self.refusal = refusal
        self.records = records
        self.conflicts = conflicts
        self.cursor = cursor
        self.head = head
        self.horizon = horizon
        self.isComplete = isComplete
    }
}
