import Foundation

extension DurableFile {
    /// Runs `body` holding this process's lock for the path and the advisory lock shared with
    /// other processes; `body` learns whether the directory exists.
    ///
    /// `body` receives `false` when the directory does not exist and `creatingDirectory` is
    /// `false`: there is then nothing to lock and nothing stored.
    ///
    /// It runs on the caller's executor, so that `body` can capture the caller's state; taking,
    /// waiting for, stamping and releasing the file lock run on the global concurrent executor.
    /// Every call leaves a new stamp in the lock file (see ``update(_:decoding:encoding:)``).
    ///
    /// `inHeldTurn`: the caller holds this process's lock for the path already (an update's
    /// turn, see ``PathLocks``), so only the file lock is taken.
    func exclusively<Result>(
        creatingDirectory: Bool = true,
        inHeldTurn: Bool = false,
        _ body: (_ directoryExists: Bool) async throws -> Result
    ) async throws -> Result {
        try checkPath()
        return try await inTurn(held: inHeldTurn) {
            try await fileLocked(creatingDirectory: creatingDirectory, body)
        }
    }

    /// ``exclusively(creatingDirectory:inHeldTurn:_:)`` once this process's lock is held.
    private func fileLocked<Result>(
        creatingDirectory: Bool,
        _ body: (_ directoryExists: Bool) async throws -> Result
    ) async throws -> Result {
        guard let lock = try await acquireFileLock(creatingDirectory: creatingDirectory) else {
            return try await body(false)
        }
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body(true))
        } catch {
            result = .failure(error)
        }
        // Whatever `body` did, an update that read the file before must look again.
        let stamped = await stampAndReleaseFileLock(lock)
        let value = try result.get()
        try stamped.get()
        return value
    }

    /// Runs `operation` holding this process's lock for the path (see ``PathLocks``), or at once
    /// when the caller holds it already (`held`). `body`: an update's body that may run inside
    /// it, for an update's attempt whose commit must be the next of this process.
    func inTurn<Result>(
        held: Bool = false,
        heldFor body: UpdateBody? = nil,
        _ operation: () async throws -> Result
    ) async throws -> Result {
        if held {
            return try await operation()
        }
        return try await PathLocks.shared.turns.withTurn(path, store: label, heldFor: body) { try await operation() }
    }

    /// Leaves a new stamp in the lock file, then releases its lock and closes it.
    @concurrent private func stampAndReleaseFileLock(_ descriptor: Int32) async -> Swift.Result<Void, any Error> {
        let stamped = Swift.Result { try leaveStamp(descriptor) }
        unlockAndClose(descriptor)
        return stamped
    }

    /// Releases a lock file's lock if it holds it, and closes it; it holds no data to lose.
    @concurrent func releaseFileLock(_ descriptor: Int32) async {
        unlockAndClose(descriptor)
    }

    /// Releases a lock file's lock, then closes it. Closing alone would keep the lock while any
    /// copy of the descriptor is open: a child this process is spawning holds one until it
    /// starts its program, and a forked child that never does holds one for its whole life.
    func unlockAndClose(_ lockDescriptor: Int32) {
        do {
            try fileSystem.unlock(lockDescriptor)
        } catch {
            // Closing below still releases it once no copy is open.
        }
        closeQuietly(lockDescriptor)
    }

    /// Opens the sidecar lock file, takes its lock and removes orphaned temporary files once;
    /// `nil` when the directory is missing and may not be created.
    ///
    /// After the lock is taken, the file at the lock's path must still be the one locked (the
    /// same device and inode): if another program deleted or replaced it, or the directory was
    /// deleted and created again, the lock protects nothing, so it is taken again on the new file.
    @concurrent private func acquireFileLock(creatingDirectory: Bool) async throws -> Int32? {
        for _ in 0..<100 {
            guard let (descriptor, lockFile) = try openLockFile(creatingDirectory: creatingDirectory) else {
                return nil
            }
            do {
                try OpenUpdate.refuseWrite(to: lockFile, store: label)
                if try !fileSystem.lock(descriptor, false) {
                    try await waitForLock(descriptor)
                }
                guard try isStillAtLockPath(lockFile) else {
                    unlockAndClose(descriptor)
                    continue
                }
                removeOrphansOnce()
                return descriptor
            } catch {
                unlockAndClose(descriptor)
                throw failure("lock '\(lockPath)'", error)
            }
        }
        throw ValueStoreError(
            .io, store: label, reason: "the lock file '\(lockPath)' was replaced every time it was locked")
    }

    /// Opens the lock file, creating it and the directory as needed, and says which file it is;
    /// `nil` when the directory is missing and may not be created. Refuses anything at the path
    /// but a regular file.
    func openLockFile(creatingDirectory: Bool) throws -> (descriptor: Int32, status: FileStatus)? {
        let flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
        let mode = mode_t(options.permissions)
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(lockPath, flags, mode)
        } catch let error as FileSystemError where error.isNotFound {
            guard creatingDirectory else { return nil }
            try createDirectories(directory)
            do {
                descriptor = try fileSystem.open(lockPath, flags, mode)
            } catch {
                throw failure("open the lock file '\(lockPath)'", error)
            }
        } catch {
            throw failure("open the lock file '\(lockPath)'", error)
        }
        do {
            let status = try fileSystem.status(descriptor)
            guard status.isRegularFile else {
                closeQuietly(descriptor)
                throw ValueStoreError(
                    .io, store: label,
                    reason: "the lock file '\(lockPath)' is \(status.typeDescription), not a regular file")
            }
            return (descriptor, status)
        } catch let error as ValueStoreError {
            throw error
        } catch {
            closeQuietly(descriptor)
            throw failure("read the lock file's status", error)
        }
    }

    /// Whether the locked lock file is still the file at the lock's path.
    func isStillAtLockPath(_ locked: FileStatus) throws -> Bool {
        do {
            return try fileSystem.pathStatus(lockPath).isSameFile(as: locked)
        } catch let error as FileSystemError where error.isNotFound {
            return false
        }
    }

    /// Waits for a lock another process holds, on a thread of its own, so the wait never blocks
    /// the threads Swift concurrency runs tasks on (see ``FileLocking``).
    func waitForLock(_ descriptor: Int32) async throws {
        try await FileLocking.waitForLock(descriptor, fileSystem: fileSystem)
    }

    /// Creates `directory` and any missing parents, syncing each parent when durable.
    private func createDirectories(_ directory: String) throws {
        do {
            try fileSystem.makeDirectory(directory, mode_t(options.directoryPermissions))
        } catch let error as FileSystemError where error.code == EEXIST {
            return
        } catch let error as FileSystemError where error.isNotFound && directory.count > 1 {
            let parent = (directory as NSString).deletingLastPathComponent
            try createDirectories(parent)
            try createDirectories(directory)
            return
        } catch {
            throw failure("create the directory '\(directory)'", error)
        }
        let parent = (directory as NSString).deletingLastPathComponent
        try synchronize(directory: parent, step: "sync the directory '\(parent)'")
    }

    /// Deletes temporary files orphaned by a crash, once per path and process. Every writer
    /// holds the lock while its temporary file exists, and this one holds it now, so any
    /// temporary file present is an orphan.
    func removeOrphansOnce() {
        guard PathLocks.shared.claimCleanup(of: path) else { return }
        do {
            for entry in try fileSystem.contentsOfDirectory(directory) where isTemporaryFile(entry) {
                removeQuietly(sibling(entry))
            }
        } catch {
            // Orphans are harmless; try again on the next save.
            PathLocks.shared.releaseCleanup(of: path)
        }
    }
}
