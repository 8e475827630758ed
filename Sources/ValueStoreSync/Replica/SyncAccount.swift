/// The user whose values a replica syncs: each account has its own state on the device and on
/// the server.
///
/// ```swift
/// let account = SyncAccount(id: "user-42")
/// ```
///
/// Replicas of two accounts in one directory keep separate folders, outboxes and archives:
/// switching accounts pauses the other's outbox, untouched, until a replica of it runs again.
/// No two ids share a folder (each maps to a folder name of its own, however long), and each
/// folder records its account: a replica of another account refuses it with
/// ``/ValueStore/ValueStoreError/Code/invalidConfiguration``.
public struct SyncAccount: Hashable, Sendable, Codable {
    /// The account's identity, as the server knows it; not empty.
    ///
    /// ```swift
    /// let folderOwner = account.id   // "user-42"
    /// ```
    public var id: String

    /// An account from its identity.
    ///
    /// ```swift
    /// let account = SyncAccount(id: "user-42")
    /// ```
    ///
    /// - Parameter id: The account's identity, as the server knows it; not empty.
    public init(id: String) {
        self.id = id
    }

    /// Whether two accounts are one: when their ids are the same bytes, as a server's database
    /// compares them. Ids that only Unicode calls equal, such as `"café"` written with `é` and
    /// with `e` and a combining accent, are two accounts, as they are two rows of a table.
    ///
    /// ```swift
    /// SyncAccount(id: "caf\u{E9}") == SyncAccount(id: "cafe\u{301}")   // false
    /// ```
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id.utf8.elementsEqual(rhs.id.utf8)
    }

    /// Hashes the id's bytes, as ``==(_:_:)`` compares them.
    ///
    /// ```swift
    /// let accounts: Set = [SyncAccount(id: "caf\u{E9}"), SyncAccount(id: "cafe\u{301}")]   // two
    /// ```
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id.utf8.count)
        for byte in id.utf8 { hasher.combine(byte) }
    }
}
