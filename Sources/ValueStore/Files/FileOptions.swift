/// How a file store writes: how hard it syncs, and who may read the file.
///
/// The default is durable and readable by others (`0644`, less the process's umask). Use
/// ``private`` for app-private data and ``cache`` for data that can be rebuilt.
///
/// ```swift
/// let token = ValueStore<Void, Data>.file(url, options: .private)
/// let thumbnails = ValueStore<Void, Data>.file(cacheURL, options: .cache)
/// let custom = ValueStore<Void, Data>.file(url, options: FileOptions(durability: .relaxed, permissions: 0o640))
/// ```
public struct FileOptions: Sendable, Hashable {
    /// How hard a save works to survive a power loss.
    public enum Durability: Sendable, Hashable {
        /// Every save is synced to stable storage before it returns: the temporary file is
        /// synced (`F_FULLFSYNC` on Darwin), renamed over the target, and the directory synced.
        /// After a crash or power loss the file holds the old or the new value, complete.
        case durable
        /// Saves are atomic but not synced: after a crash of the process the file holds the old or
        /// the new value, complete; after a power loss or kernel panic the latest saves may be
        /// lost. For caches and other data that can be rebuilt.
        case relaxed
    }

    /// How hard a save works to survive a power loss.
    public var durability: Durability
    /// The permission bits of created files, such as `0o600`; the process's umask still applies.
    /// Directories the store creates get the same bits plus search (`x`) wherever read is set.
    public var permissions: UInt16

    /// Creates options.
    ///
    /// - Parameters:
    ///   - durability: How hard a save works to survive a power loss.
    ///   - permissions: The permission bits of created files.
    public init(durability: Durability = .durable, permissions: UInt16 = 0o644) {
        self.durability = durability
        self.permissions = permissions
    }

    /// Durable saves; files `0644` (owner writes, everyone reads), less the umask.
    public static let `default` = FileOptions()
    /// Durable saves; files `0600` and directories `0700`: only the owner may read them.
    public static let `private` = FileOptions(permissions: 0o600)
    /// Atomic saves without syncing, files `0644`: for caches that can be rebuilt.
    public static let cache = FileOptions(durability: .relaxed)

    /// The bits for directories the store creates: search wherever read is allowed.
    var directoryPermissions: UInt16 {
        permissions | ((permissions & 0o444) >> 2)
    }
}
