/// Why the server refused a whole push or pull: the replica must catch up first, then ask again.
///
/// The server applies nothing from a refused request and records nothing about it, so the
/// refusal repeats until the replica has done what it asks.
///
/// ```swift
/// if response.refusal == .restored {
///     print("the server was restored from a backup")
/// }
/// ```
public enum SyncRefusal: String, Hashable, Sendable, Codable {
    /// The account has a new epoch (a deliberate reset): the replica takes the server's state,
    /// archives its own differences, pending changes included, and pushes nothing of before.
    case epochChanged
    /// The server's history is behind what the replica saw (it was restored from a backup, same
    /// epoch): the replica pulls the whole state and pushes back every record it holds that the
    /// server lacks or holds older.
    case restored
    /// The server collected removals the replica has not pulled yet: the replica pulls the whole
    /// state, and removes the keys it holds that the state no longer has.
    case resyncNeeded
}
