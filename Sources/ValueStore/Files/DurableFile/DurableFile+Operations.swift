import Foundation

// Each runs off the caller's executor, which may be the main actor. Saves and removes join this
// process's queue for the file on the global concurrent executor, where they only wait; the
// queue's leader runs the commit, which blocks (open, write, fsync, rename, unlink), on the I/O
// threads (see ``CommitQueue`` and ``BlockingIO``). The others run on the I/O threads when their
// caller has them run there (`BlockingIO.run`).
extension DurableFile {
    /// Replaces the file with `data` under the locks, sharing the commit with the saves and
    /// removes of this process that arrive while another commit to the file is in flight (see
    /// ``CommitQueue``).
    @concurrent func save(_ data: Data) async throws {
        try await save(encoding: { data })
    }

    /// ``save(_:)`` of the bytes `encode` makes, made only if this save's value is the one
    /// committed: a save that arrives later in the same group commit replaces it unencoded.
    @concurrent func save(encoding encode: @escaping @Sendable () throws -> Data) async throws {
        try checkPath()
        try await commitInTurn(encode)
    }

    /// Stores the contents `contents` makes (`nil` removes) in this process's turn for the file.
    private func commitInTurn(_ contents: @escaping CommitQueue.Contents) async throws {
        // Inside an update's body, a write to the file being updated is refused here, in the
        // task that knows the update (`nestedWrite`); the commit may run in another waiter's.
        if OpenUpdate.current != nil {
            try await BlockingIO.run { try await refuseWriteInsideItsOwnUpdate() }
        }
        try await joinCommitQueue(contents)
    }

    /// Stores the contents `contents` makes through this process's queue for the file; its
    /// leader commits on the I/O threads.
    private func joinCommitQueue(_ contents: @escaping CommitQueue.Contents) async throws {
        try await CommitQueue.shared.write(contents, key: commitKey) { contents in
            try await commit(contents)
        }
    }

    /// Throws `nestedWrite` when this task runs the body of an update of this file, or of the
    /// file the symbolic link at the path names; off the caller's executor.
    @concurrent private func refuseWriteInsideItsOwnUpdate() async throws {
        let target = try linkedFile() ?? self
        let lockFile: FileStatus
        do {
            lockFile = try fileSystem.pathStatus(target.lockPath)
        } catch let error as FileSystemError where error.isNotFound {
            return  // no lock file: no update of this file has read it
        } catch {
            throw target.failure("read the lock file's status", error)
        }
        try OpenUpdate.refuseWrite(to: lockFile, store: target.label)
    }

    /// Writes `contents`, or removes the file for `nil`, under the locks; through a symbolic
    /// link at the path, which stays, to the file it names. The queue's leader runs it on the
    /// I/O threads.
    private func commit(_ contents: Data?) async throws {
        if let linked = try linkedFile() {
            try await linked.joinCommitQueue({ contents })
            return fileSystem.changes.didChange(path)
        }
        if let contents {
            return try await exclusively { _ in try write(contents) }
        }
        // Nothing to remove: return without creating the lock file.
        guard try exists() else { return }
        try await exclusively(creatingDirectory: false) { directoryExists in
            if directoryExists {
                try delete()
            }
        }
    }

    /// The file's queue in ``CommitQueue``: stores of one path with other options (durability,
    /// permissions) never share a commit, so each write gets the durability it asked for.
    var commitKey: String {
        "\(options.durability == .durable ? "d" : "r")\(options.permissions):\(path)"
    }

    /// The file's bytes, writing `create()`'s first when there is no file, all under the locks:
    /// processes racing to create the file all end up with the bytes one of them wrote.
    @concurrent func readOrCreate(_ create: @Sendable () -> Data) async throws -> Data {
        try await exclusively { _ in
            if let data = try read() {
                return data
            }
            let data = create()
            try store(data)
            return data
        }
    }

    /// Removes the file under the locks; removing a missing file, even from a missing
    /// directory, succeeds without creating anything.
    @concurrent func remove() async throws {
        try checkPath()
        // Through a symbolic link at the path, the file it names goes; the link stays, as a save
        // through it would find it.
        try await commitInTurn({ nil })
    }

    /// Whether there is a file at the path (any error but its absence is thrown).
    func exists() throws -> Bool {
        do {
            _ = try fileSystem.permissions(path)
            return true
        } catch let error as FileSystemError where error.isNotFound {
            return false
        } catch {
            throw failure("look for the file", error)
        }
    }

    /// Moves the file aside under the locks, creating a missing lock file with the file's own
    /// permissions rather than these options', and returns where it went.
    @concurrent func moveAsideKeepingPermissions() async throws -> String {
        try checkPath()
        var options = options
        do {
            options.permissions = try fileSystem.pathStatus(path).permissions & 0o666
        } catch let error as FileSystemError where error.isNotFound {
            throw ValueStoreError(.notFound, store: label, reason: "there is no file to move aside")
        } catch {
            throw failure("read the file's status", error)
        }
        return try await DurableFile(copying: self, options: options).moveAsideExclusively()
    }

    /// Moves the file aside under the locks and returns where it went.
    @concurrent func moveAsideExclusively() async throws -> String {
        try await exclusively(creatingDirectory: false) { directoryExists in
            guard directoryExists else {
                throw ValueStoreError(.notFound, store: label, reason: "there is no file to move aside")
            }
            return try moveAside()
        }
    }
}
