public import Foundation
import Synchronization
import ValueStore

/// One account's synced values on this device: typed stores that save locally at once, and a
/// sync that pushes their changes to a server and pulls everyone else's, losing nothing.
///
/// ```swift
/// let account = SyncAccount(id: "user-42")
/// let server = InMemorySyncServer()
/// let replica = try SyncReplica(directory: syncFolder, account: account,
///                               remote: server.remote(for: account), options: SyncOptions())
/// let theme = replica.store("theme", as: Theme.self)
/// try await theme.save(.dark)                    // durable at once, offline or not
/// let syncing = Task { try await replica.run() } // push and pull until cancelled
/// ```
///
/// - **The outbox is the device's own and durable.** A `save`, `remove` or `update` on a store is
///   one durable commit of the key's record (value or removal, stamp, pending mark) in the
///   account's settings file, and returns; it never touches the network, never throws because
///   the server is away. A change leaves the outbox only when the server acknowledges that very
///   change, or when a newer local change to the key replaces it. Errors never drop one; a
///   change the server refuses for good moves, with its value, to
///   ``SyncStatus/rejectedChanges``. ``discardPendingChanges()`` is the only other way out.
/// - **Nothing is lost, only archived.** Every change that loses to another (see
///   ``SyncPolicy``) is archived on the server, and in this replica's archive when it was this
///   replica's: ``conflicts()`` yields each, ``archivedConflicts()`` lists them, ``resolve(_:)``
///   removes one.
/// - **No default is ever written.** The replica writes only what a store was asked to write.
///   Edits made before the first complete pull follow ``SyncOptions/firstSync``.
/// - **One account per replica.** Another account in the same directory has its own folder and
///   state; its outbox waits, untouched, until a replica of it runs.
/// - **A copied directory knows it.** The replica's identity is kept with the device and inode of
///   its folder; a copy finds them changed and makes itself a new identity before it pushes, so
///   two devices never push as one.
/// - **Servers that go back are caught up.** A server restored from a backup is given back
///   every newer record this replica holds; a new epoch makes the replica take the server's
///   state and archive its own differences.
///
/// Processes may share an account's folder (an app and its extensions): each commit takes the
/// folder's lock and first reads what the others committed, so every acknowledged save of
/// either is kept and shown by both. A process that may only read the folder loads, and its
/// saves throw. The stores a replica returns may be used from any task.
public final class SyncReplica: Sendable {
    /// The account whose values this replica syncs.
    ///
    /// ```swift
    /// print(replica.account.id)   // "user-42"
    /// ```
    public let account: SyncAccount
    /// The directory that holds this replica's folder, and other accounts' folders.
    ///
    /// ```swift
    /// let folder = replica.directory.appending(path: "user-42")
    /// ```
    public let directory: URL
    /// The server, through its witness.
    ///
    /// ```swift
    /// print(replica.remote.label)
    /// ```
    public let remote: SyncRemote
    /// How this replica syncs.
    ///
    /// ```swift
    /// print(replica.options.pollInterval)
    /// ```
    public let options: SyncOptions

    let files: ReplicaFiles
    /// The replica's state, in its one lock.
    let state = Mutex(ReplicaState())
    /// One announcement to the replica's streams at a time (see ``announce()``).
    let announcing = Mutex(())
    /// One durable write at a time: a local change or a sync's commit reads the records, decides
    /// and commits before the next one reads.
    let writes = AsyncLock()
    /// One sync at a time.
    let rounds = AsyncLock()

    /// A replica of `account` in `directory`, syncing with `remote`.
    ///
    /// ```swift
    /// let replica = try SyncReplica(directory: syncFolder, account: SyncAccount(id: "user-42"),
    ///                               remote: server.remote(for: account), options: SyncOptions())
    /// ```
    ///
    /// Nothing is read or written until the replica is first used (its status, a store, a
    /// sync): then it creates its folder, `directory/<account>/`, records its account there
    /// (`sync.account`) or refuses a folder that records another, reads its settings file
    /// (`sync.plist`) and journal and, in a new or copied folder, makes itself an identity.
    ///
    /// - Parameters:
    ///   - directory: The directory for the replicas of this device's accounts.
    ///   - account: The account.
    ///   - remote: The server.
    ///   - options: How to sync.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/invalidConfiguration`` for an empty account id.
    public init(directory: URL, account: SyncAccount, remote: SyncRemote, options: SyncOptions = SyncOptions()) throws {
        guard !account.id.isEmpty else {
            throw ValueStoreError(.invalidConfiguration, store: "sync replica", reason: "the account id is empty")
        }
        self.account = account
        self.directory = directory
        self.remote = remote
        self.options = options
        files = ReplicaFiles(
            directory: directory, account: account, options: options.fileOptions,
            foldingSize: options.journalFoldingSize)
    }

    deinit {
        // The streams end with the replica: a loop over them finishes, and leaks nothing.
        let (statuses, conflicts) = state.withLock { state in
            (state.statusListeners.all, state.conflictListeners.all)
        }
        for listener in statuses {
            listener.finish()
        }
        for listener in conflicts {
            listener.finish()
        }
    }

    /// What errors and labels call this replica.
    var label: String {
        "sync replica of account '\(account.id)' in '\(files.folder.path(percentEncoded: false))'"
    }

    /// The replica's identity, made when it first opened its folder, and again if the folder was
    /// copied.
    ///
    /// ```swift
    /// let me = try await replica.id   // counts per device in a `.merge` key, say
    /// ```
    ///
    /// - Throws: The settings file's error when the replica cannot open its folder.
    public var id: ReplicaID {
        get async throws {
            try await open().id
        }
    }

    /// Where the replica stands, now; synchronous.
    ///
    /// ```swift
    /// let status = replica.status
    /// print(status.pendingChanges, status.rejectedChanges.count, status.unresolvedConflicts)
    /// ```
    ///
    /// Before the replica opened its folder, the first read of the status reads it (the
    /// settings file and the journal, on the calling thread): a reopened replica shows the
    /// changes that wait, before any store is used. A folder that cannot be read shows its
    /// error as ``SyncStatus/lastError``.
    public var status: SyncStatus {
        peekIfUnopened()
        return withState { $0.status }
    }

    /// The status now, then again after each change of it, for as long as the stream is iterated.
    ///
    /// ```swift
    /// for await status in replica.statusUpdates() {
    ///     print("\(status.pendingChanges) pending, \(status.phase)")
    /// }
    /// ```
    ///
    /// The first status reflects the folder, as ``status`` does. The stream finishes when the
    /// replica is released.
    ///
    /// - Returns: A stream that keeps only the newest status for a slow consumer.
    public func statusUpdates() -> AsyncStream<SyncStatus> {
        peekIfUnopened()
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The current status is yielded in the lock, so that an announcement right after cannot
        // come before it; nobody iterates the stream yet, so the yield wakes no task (see
        // ``ReplicaAnnouncements``).
        let id = state.withLock { state in
            continuation.yield(state.status)
            return state.statusListeners.add(continuation)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.statusListeners.remove(id) }
        }
        return stream
    }

    /// Each conflict this replica archives from now on, as it is archived.
    ///
    /// ```swift
    /// for await conflict in replica.conflicts() {
    ///     print("\(conflict.key) lost: \(conflict.cause)")
    /// }
    /// ```
    ///
    /// The stream finishes when the replica is released.
    ///
    /// - Returns: A stream of conflicts, none of them missed while it is iterated.
    public func conflicts() -> AsyncStream<SyncConflict> {
        let (stream, continuation) = AsyncStream<SyncConflict>.makeStream()
        let id = withState { $0.conflictListeners.add(continuation) }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.conflictListeners.remove(id) }
        }
        return stream
    }

    /// The replica's archive: its changes that lost, its edits from before the first pull that
    /// lost, and its differences when the server started a new epoch, oldest first.
    ///
    /// ```swift
    /// let archived = try await replica.archivedConflicts()
    /// ```
    ///
    /// - Returns: The archive, durable until each entry is resolved.
    /// - Throws: The settings file's error when the replica cannot open its folder.
    public func archivedConflicts() async throws -> [SyncConflict] {
        try await open()
        return withState { $0.archive }
    }

    /// Removes a conflict from the archive, or a change from ``SyncStatus/rejectedChanges``.
    ///
    /// ```swift
    /// try await replica.resolve(archived[0])
    /// ```
    ///
    /// - Parameter conflict: An entry of ``archivedConflicts()`` or of the rejected changes;
    ///   resolving one that is not there does nothing.
    /// - Throws: The settings file's error; the entry is then still there.
    public func resolve(_ conflict: SyncConflict) async throws {
        try await exclusively {
            var (archive, rejected) = withState { ($0.archive, $0.rejected) }
            var changes = ReplicaFiles.Changes()
            if let index = archive.firstIndex(of: conflict) {
                archive.remove(at: index)
                changes.archive = archive
            } else if let index = rejected.firstIndex(of: conflict) {
                rejected.remove(at: index)
                changes.rejected = rejected
            }
            try await commit(changes)
        }
    }

    /// Drops every change not yet acknowledged: each key goes back to the newest record the
    /// server sent of it, or to absence. The only way unsent changes are dropped.
    ///
    /// ```swift
    /// try await replica.discardPendingChanges()
    /// ```
    ///
    /// A change in flight when this runs may still reach the server; its key then follows the
    /// server's record on the next pull.
    ///
    /// - Throws: The settings file's error; nothing was dropped then.
    public func discardPendingChanges() async throws {
        try await exclusively {
            let pending = withState { $0.records.filter(\.value.isPending) }
            var changed: [String: LocalRecord?] = [:]
            for (key, record) in pending {
                changed[key] = .some(record.fallback)
            }
            // The meta too, with the clock past the dropped stamps: a change in flight may have
            // reached the server, and a stamp made after a reopening must not repeat its.
            try await commit(ReplicaFiles.Changes(meta: withState { $0.currentMeta }, records: changed))
        }
    }
}
