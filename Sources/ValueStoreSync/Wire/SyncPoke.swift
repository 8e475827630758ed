/// A server's signal that an account changed: "pull now", and, when the server says, which
/// replica's push made the change and the account's head that push reached.
///
/// A replica's ``SyncReplica/run()`` pulls on every poke, except the echo of its own push: a
/// poke whose ``author`` is the replica itself and whose ``head`` its cursor has reached (the
/// push's answer already carried everything up to it) asks for nothing. A poke without an
/// author or a head, which older servers send and ``pullNow`` is, always means "pull now".
///
/// ```swift
/// let poke = SyncPoke(author: ReplicaID("phone"), head: ServerVersion(42))
/// let plain = SyncPoke.pullNow   // no author: every replica pulls
/// ```
public struct SyncPoke: Hashable, Sendable, Codable {
    /// The replica whose push made the change, if the server says.
    ///
    /// ```swift
    /// if poke.author == nil { print("someone changed the account") }
    /// ```
    public var author: ReplicaID?
    /// The account's head once that push committed, if the server says: every version the
    /// push wrote is at or below it.
    ///
    /// ```swift
    /// if let head = poke.head { print("the account reached \(head)") }
    /// ```
    public var head: ServerVersion?

    /// A poke from its author and head.
    ///
    /// ```swift
    /// let poke = SyncPoke(author: ReplicaID("phone"), head: ServerVersion(42))
    /// ```
    ///
    /// - Parameters:
    ///   - author: The replica whose push made the change; `nil` when unknown.
    ///   - head: The account's head once that push committed; `nil` when unknown.
    public init(author: ReplicaID? = nil, head: ServerVersion? = nil) {
        self.author = author
        self.head = head
    }

    /// A poke that says only "pull now": every replica pulls.
    ///
    /// ```swift
    /// continuation.yield(.pullNow)
    /// ```
    public static let pullNow = SyncPoke()
}
