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
    /// The system calls the lock makes.
    var fileSystem: FileSystem = .live

    /// Runs `body` holding the lock.
    func withLock<Result>(_ body: () async throws -> Result) async throws -> Result {
        let descriptor = try await BlockingIO.run { try await acquire() }
        defer {
            if descriptor >= 0 {
                release(descriptor)
            }
        }
        return try await body()
    }

    /// Opens the lock file (made if absent) and takes its lock: `-1` when the folder may only be
    /// read and has no lock file.
    @concurrent private func acquire() async throws -> Int32 {
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(path, O_RDWR | O_CREAT | O_CLOEXEC, permissions)
        } catch let error as FileSystemError where [EACCES, EROFS, EPERM].contains(error.code) {
            do {
                descriptor = try fileSystem.open(path, O_RDONLY | O_CLOEXEC, permissions)
            } catch let error as FileSystemError where error.isNotFound {
                return -1
            } catch {
                throw failure("could not be opened (errno \(ReplicaJournal.code(of: error)))")
            }
        } catch {
            throw failure("could not be opened (errno \(ReplicaJournal.code(of: error)))")
        }
        do {
            try await FileLocking.lockExclusively(descriptor, fileSystem: fileSystem)
        } catch {
            release(descriptor)
            throw failure("could not be taken (\(error))")
        }
        return descriptor
    }

    /// Releases the lock and closes its file. Unlocked before it is closed: a child being
    /// spawned holds a copy of every descriptor until it starts its program, and closing alone
    /// keeps the lock. A failure loses nothing: nothing is written through the lock file.
    private func release(_ descriptor: Int32) {
        do {
            try fileSystem.unlock(descriptor)
        } catch {
            // Closing releases it once no copy is open.
        }
        do {
            try fileSystem.close(descriptor)
        } catch {
            // Nothing was written through it.
        }
    }

    private func failure(_ what: String) -> ValueStoreError {
        ValueStoreError(.io, store: "sync folder lock '\(path)'", reason: "the folder's lock \(what)")
    }
}
