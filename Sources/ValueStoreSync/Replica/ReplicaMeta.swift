import Foundation

/// What a replica keeps about itself, in one entry of its files.
struct ReplicaMeta: Hashable, Sendable, Codable {
    /// The replica's identity.
    var id: ReplicaID
    /// The folder the identity was made in; a copy of the folder is another folder.
    var marker: FolderMarker
    /// The highest server version any answer gave the replica.
    var seen = ServerVersion.zero
    /// How far the replica has pulled.
    var cursor = ServerVersion.zero
    /// The account's epoch, once pulled.
    var epoch: UUID?
    /// The clock's state.
    var clock = HybridClock()
    /// Whether the replica finished its first complete pull.
    var hasPulled = false
    /// A refusal being answered: set before the whole-state pull it calls for, cleared in the
    /// commit that ends it, so a crash in between starts it again.
    var resync: SyncRefusal?

    init(id: ReplicaID, marker: FolderMarker) {
        self.id = id
        self.marker = marker
    }
}

/// The device and inode of a replica's folder, recorded with its identity: a copy of the folder
/// (another device's backup restored, a directory copied) has other ones, and makes itself a new
/// identity before it pushes. The files inside are replaced or rewritten, so it is the folder's,
/// which stays.
struct FolderMarker: Hashable, Sendable, Codable {
    var device: UInt64
    var inode: UInt64
}
