import Synchronization

/// Serializes writers of each file path within this process.
///
/// File stores take this lock before the advisory file lock, so tasks of one process queue here
/// without blocking threads, and at most one of them at a time waits on the file lock that
/// other processes share. Stores created separately for the same path share the entry.
///
/// An update that found the file changed by this process holds the path's turn across its next
/// read, body and commit (see ``TurnLocks``), so that the writes of this process wait and its
/// commit is the next one.
final class PathLocks: Sendable {
    static let shared = PathLocks()

    /// The writers' turns, by path: `PathLocks.shared.turns.withTurn(path, store: label) { … }`
    /// runs a write holding the path's lock, which an update holds while its body runs; see
    /// ``TurnLocks/withTurn(_:store:heldFor:_:)``.
    let turns = TurnLocks<String>()
    private let cleanedPaths = Locked<Set<String>>([])

    /// Whether this is the first call for `path` in this process, so orphaned temporary files
    /// next to it should be cleaned up now.
    func claimCleanup(of path: String) -> Bool {
        cleanedPaths.withLock { $0.insert(path).inserted }
    }

    /// Lets a later save retry a cleanup that failed.
    func releaseCleanup(of path: String) {
        _ = cleanedPaths.withLock { $0.remove(path) }
    }
}

/// An update of a file whose body is running in this task, so that a write to the same file
/// from inside it is refused instead of making the update start over forever.
///
/// File updates run their body with no lock held and commit only if nothing wrote the file
/// meanwhile. A write made by the body itself would change the file before every commit, so it
/// throws ``ValueStoreError/Code/nestedWrite``. Tasks started inside the body inherit the
/// marker; once the body returns it no longer applies, and their writes commit on their own.
final class OpenUpdate: Sendable {
    /// The innermost update whose body this task runs.
    @TaskLocal static var current: OpenUpdate?

    /// The updated file's lock file: the file's identity, whatever path names it.
    private let device: UInt64
    private let inode: UInt64
    private let enclosing: OpenUpdate?
    private let isRunning = Atomic<Bool>(true)

    private init(lockFile: FileStatus, enclosing: OpenUpdate?) {
        device = lockFile.device
        inode = lockFile.inode
        self.enclosing = enclosing
    }

    /// Runs an update's `body` as the open update of the file locked by `lockFile`.
    nonisolated(nonsending) static func running<Result>(
        lockFile: FileStatus,
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        let update = OpenUpdate(lockFile: lockFile, enclosing: current)
        defer { update.isRunning.store(false, ordering: .releasing) }
        return try await $current.withValue(update) { try await body() }
    }

    /// Throws ``ValueStoreError/Code/nestedWrite`` when an update of the file locked by
    /// `lockFile` is running its body in this task or in the task that started it.
    static func refuseWrite(to lockFile: FileStatus, store: String) throws {
        var update = current
        while let open = update {
            if open.device == lockFile.device && open.inode == lockFile.inode
                && open.isRunning.load(ordering: .acquiring)
            {
                throw ValueStoreError(
                    .nestedWrite, store: store,
                    reason:
                        "the file was written from inside an update of the same file, which would start over"
                        + " after every such write; nothing was written. Change the update's value instead")
            }
            update = open.enclosing
        }
    }
}
