import Foundation
import ValueStore

/// The lock of a replica's folder, an advisory `flock` on `sync.lock` in it, which every process
/// using the folder (an app and its extensions) holds while it reads what the others appended,
/// decides and commits: one commit or fold at a time across processes, each made on everything
/// committed before it.
///
/// Within a process the replica's write lock queues tasks first, so at most one of its tasks
/// waits here; a wait for another process runs on a thread of its own, never on the threads
/// Swift concurrency runs tasks on. A process that may only read the folder, and cannot make the
/// lock file, reads without it: it never writes.
struct ReplicaFolderLock: Sendable {
    /// The lock file's path.
    let path: String
    /// The permission bits of a lock file this makes.
    let permissions: mode_t

    /// Runs `body` holding the lock.
    func withLock<Result>(_ body: () async throws -> Result) async throws -> Result {
        let descriptor = try await acquire()
        defer {
            if descriptor >= 0 {
                // Unlocked before it is closed: a child being spawned holds a copy of every
                // descriptor until it starts its program, and closing alone keeps the lock.
                _ = flock(descriptor, LOCK_UN)
                close(descriptor)
            }
        }
        return try await body()
    }

    /// Opens the lock file (made if absent) and takes its lock: `-1` when the folder may only be
    /// read and has no lock file.
    @concurrent private func acquire() async throws -> Int32 {
        var descriptor = ReplicaJournal.openFile(path, O_RDWR | O_CREAT | O_CLOEXEC, permissions)
        if descriptor < 0 && (errno == EACCES || errno == EROFS || errno == EPERM) {
            descriptor = ReplicaJournal.openFile(path, O_RDONLY | O_CLOEXEC, permissions)
            if descriptor < 0 && errno == ENOENT { return -1 }
        }
        guard descriptor >= 0 else { throw failure("could not be opened (errno \(errno))") }
        do {
            try await FileLocking.lockExclusively(descriptor)
        } catch {
            close(descriptor)
            throw failure("could not be taken (\(error))")
        }
        return descriptor
    }

    private func failure(_ what: String) -> ValueStoreError {
        ValueStoreError(.io, store: "sync folder lock '\(path)'", reason: "the folder's lock \(what)")
    }
}
