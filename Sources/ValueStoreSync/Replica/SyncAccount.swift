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
}
