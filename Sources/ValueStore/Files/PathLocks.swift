/// Serializes writers of each file path within this process.
///
/// File stores take this lock before the advisory file lock, so tasks of one process queue here
/// without blocking threads, and at most one of them at a time waits on the file lock that
/// other processes share. Stores created separately for the same path share the entry.
final class PathLocks: Sendable {
    static let shared = PathLocks()

    private struct Entry {
        let lock = AsyncLock()
        var users = 0
    }

    private let entries = Locked<[String: Entry]>([:])
    private let cleanedPaths = Locked<Set<String>>([])

    /// Runs `body` while holding the lock for `path`.
    nonisolated(nonsending) func withLock<Result>(
        _ path: String,
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        let lock = entries.withLock { entries in
            entries[path, default: Entry()].users += 1
            return entries[path]!.lock
        }
        defer {
            entries.withLock { entries in
                entries[path]!.users -= 1
                if entries[path]!.users == 0 {
                    entries[path] = nil
                }
            }
        }
        return try await lock.withLock(body)
    }

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
