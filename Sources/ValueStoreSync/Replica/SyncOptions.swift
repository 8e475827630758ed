public import ValueStore

/// How a replica syncs: its clock, what its first sync does with earlier edits, its files, the
/// sizes of its requests, and the pace of ``SyncReplica/run()``.
///
/// ```swift
/// var options = SyncOptions()
/// options.clock = SyncClock { Date().addingTimeInterval(-600) }
/// options.firstSync = .keepRemote
/// ```
public struct SyncOptions: Sendable {
    /// What a replica does with edits made before its first complete pull, on keys the server
    /// already has a value for.
    ///
    /// ```swift
    /// options.firstSync = .keepLocal
    /// ```
    ///
    /// It applies to `.lastWriterWins` and `.saveBeatsRemove` keys that have a value on the
    /// server; over a removal, the key's policy settles the edit as any other. A
    /// `.compareAndSet` edit made before the first pull was made on nothing, so it loses to any
    /// server value and is archived; a `.merge` edit is merged. Either way, the value that
    /// loses is archived in the replica's archive.
    public enum FirstSync: Hashable, Sendable {
        /// The server's value wins; the edit is archived (``SyncConflict/Cause/firstSync``). A
        /// fresh device never pushes its defaults or early edits over the values the user
        /// already has.
        case keepRemote
        /// The edit wins, as a change made on the server's value, which is archived
        /// (``SyncConflict/Cause/firstSync``).
        case keepLocal
    }

    /// The wall clock the replica's timestamps start from.
    ///
    /// ```swift
    /// options.clock = SyncClock { Date().addingTimeInterval(-600) }
    /// ```
    public var clock: SyncClock = .system
    /// What the first sync does with earlier edits; ``FirstSync/keepRemote`` by default.
    ///
    /// ```swift
    /// options.firstSync = .keepLocal
    /// ```
    public var firstSync: FirstSync = .keepRemote
    /// The permissions of the replica's files. Their durability does not change with it: every
    /// commit is flushed to the replica's journal, and each fold of the journal into the settings
    /// file is flushed before the journal is emptied, whatever the options (an outbox survives a
    /// crash or it is not one).
    ///
    /// ```swift
    /// options.fileOptions = .private
    /// ```
    public var fileOptions: FileOptions = .default

    /// The size past which the replica's journal is folded into its settings file: small in the
    /// crash tests, so that kills land in folds too.
    package var journalFoldingSize = 256 * 1024
    /// The most changes in one push.
    ///
    /// ```swift
    /// options.pushBatchSize = 100
    /// ```
    public var pushBatchSize = 500
    /// The most records in one pulled page.
    ///
    /// ```swift
    /// options.pullPageSize = 100
    /// ```
    public var pullPageSize = 500
    /// How often ``SyncReplica/run()`` pulls while the remote's pokes are not alive.
    ///
    /// ```swift
    /// options.pollInterval = .seconds(60)
    /// ```
    public var pollInterval: Duration = .seconds(300)
    /// How long ``SyncReplica/run()`` waits after its first failure; it doubles with each
    /// failure in a row, up to ``maximumRetryDelay``.
    ///
    /// ```swift
    /// options.retryDelay = .milliseconds(500)
    /// ```
    public var retryDelay: Duration = .seconds(1)
    /// The longest wait between two attempts of ``SyncReplica/run()``.
    ///
    /// ```swift
    /// options.maximumRetryDelay = .seconds(60)
    /// ```
    public var maximumRetryDelay: Duration = .seconds(300)

    /// The default options.
    ///
    /// ```swift
    /// let options = SyncOptions()
    /// ```
    public init() {}
}
