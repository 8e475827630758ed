import Foundation
import Synchronization

extension DurableFile {
    /// What an update read: the lock file it will commit under, open but not locked, and what
    /// its commit checks is still there.
    struct Snapshot {
        let lock: Int32
        /// Which lock file `lock` is.
        let lockFile: FileStatus
        /// The stamp the last writer left in the lock file.
        let stamp: UInt64
        /// The file that was read; `nil` when there was none.
        let file: FileStatus?
        /// The bytes that were read, as stored; `nil` when there was no file.
        let stored: Data?
        /// The file's contents, decoded; `nil` when there was no file.
        let contents: Data?
    }

    /// The store's update: reads the contents, lets `body` change them on the caller's
    /// executor, and stores the result only if it changed (`nil` deletes), returning it.
    ///
    /// No lock is held while `body` runs, since it may await anything, and iOS terminates a
    /// suspended app that holds a file lock in a shared container. The commit takes both locks
    /// and writes only if nothing changed since the read: the same stamp in the lock file (every
    /// writer leaves a new one), the same file at the path (device, inode, size and modification
    /// time, for writers that leave no stamp) and, under the locks, the same bytes: a program
    /// that writes the file in place within one tick of a coarse clock, or puts its time back as
    /// `touch -r` does, leaves the rest as it was. Otherwise it reads again and runs
    /// `body` again, after a random wait from the second retry on (see ``backOff(after:)``).
    /// A write to this file from inside `body` throws ``ValueStoreError/Code/nestedWrite``
    /// (see ``OpenUpdate``) instead of making the update start over forever.
    ///
    /// When the file changed because this process wrote it, the next attempt holds the path's
    /// turn in this process (``PathLocks``) through its read, body and commit: this process's
    /// writes wait, so its commit is the next and a saver beside it cannot starve it. A write
    /// from a task the body awaits but that does not inherit the update (`Task.detached`) is
    /// refused once it has waited for that body for ``TurnLocks/patience``, and an update that
    /// finds the file changed by this process ``ownConflictLimit`` times in a row gives up; both
    /// throw ``ValueStoreError/Code/nestedWrite``.
    ///
    /// `decoding` and `encoding` turn stored bytes into contents and back, off the caller's
    /// executor; the encrypted store passes ones that decrypt and encrypt.
    func update(
        _ body: (_ contents: inout Data?) async throws -> Void,
        decoding: @Sendable (_ stored: Data) throws -> Data = { $0 },
        encoding: @Sendable (_ contents: Data) throws -> Data = { $0 }
    ) async throws -> Data? {
        try checkPath()
        if let linked = try await linkedFileConcurrently() {
            // Through the link, which stays: the file it names is read and written.
            let contents = try await linked.update(body, decoding: decoding, encoding: encoding)
            fileSystem.changes.didChange(path)
            return contents
        }
        var conflicts = 0
        var ownConflicts = 0
        let running = UpdateBody()
        while true {
            let started = ContinuousClock.now
            let outcome: Attempt
            if ownConflicts == 0 {
                outcome = try await attempt(body, running, inHeldTurn: false, decoding: decoding, encoding: encoding)
            } else {
                // This process wrote the file meanwhile: its writes wait until this commit.
                outcome = try await inTurn(heldFor: running) {
                    try await attempt(body, running, inHeldTurn: true, decoding: decoding, encoding: encoding)
                }
            }
            switch outcome {
            case .done(let contents):
                return contents
            case .changed(let byThisProcess):
                ownConflicts = byThisProcess ? ownConflicts + 1 : 0
            }
            try Self.refuseAfter(ownConflicts: ownConflicts, store: label)
            conflicts += 1
            await Self.backOff(after: conflicts, attempt: started.duration(to: .now))
        }
    }

    /// How many times in a row an update may find the file changed by this process before it
    /// gives up: in its own turn (see ``PathLocks``), only a write from another update's body
    /// or from a task its body awaits gets in.
    static var ownConflictLimit: Int { 32 }

    /// Throws ``ValueStoreError/Code/nestedWrite`` once an update of `store` found the file
    /// changed by this process ``ownConflictLimit`` times in a row.
    static func refuseAfter(ownConflicts: Int, store: String) throws {
        guard ownConflicts >= ownConflictLimit else { return }
        throw ValueStoreError(
            .nestedWrite, store: store,
            reason:
                "the update ran \(ownConflicts) times in a row, each time after a write of this process to the"
                + " file got in while its body ran, as writes from a task the body awaits do (Task.detached,"
                + " a GCD callback); nothing was written")
    }

    /// How an update's attempt ended.
    private enum Attempt {
        /// It stored these contents, or left them as they were.
        case done(Data?)
        /// The file changed since it was read, by a writer of this process or not.
        case changed(byThisProcess: Bool)
    }

    /// Reads the file, runs `body` as `running` and commits: in this process's queue for the
    /// file, or directly when the caller holds the path's turn (`inHeldTurn`).
    private func attempt(
        _ body: (_ contents: inout Data?) async throws -> Void,
        _ running: UpdateBody,
        inHeldTurn: Bool,
        decoding: @Sendable (_ stored: Data) throws -> Data,
        encoding: @Sendable (_ contents: Data) throws -> Data
    ) async throws -> Attempt {
        let snapshot = try await snapshot(decoding: decoding)
        var contents = snapshot.contents
        do {
            try await running.run {
                try await OpenUpdate.running(lockFile: snapshot.lockFile) { try await body(&contents) }
            }
        } catch {
            await releaseFileLock(snapshot.lock)
            throw error
        }
        guard contents != snapshot.contents else {
            await releaseFileLock(snapshot.lock)
            return .done(contents)
        }
        let committed: Attempt
        if inHeldTurn {
            committed = try await commit(contents, over: snapshot, inHeldTurn: true, encoding: encoding)
        } else {
            // A turn of its own in this process's queue for the file: saves that arrive during
            // the commit share the one after it.
            committed = try await CommitQueue.shared.exclusive(commitKey) { [contents] in
                try await commit(contents, over: snapshot, inHeldTurn: false, encoding: encoding)
            }
        }
        return committed
    }

    /// Waits before running an update's body again: not at all after its first conflict, then
    /// a random time up to the last attempt's duration times 2, 4, 8… (at most 1 s). Two updates
    /// whose bodies write each other's files (opposite moves) otherwise run in step forever, each
    /// changing the other's file before it commits; scaling by the attempt keeps them apart on a
    /// slow disk as on a fast one.
    private static func backOff(after conflicts: Int, attempt: Duration) async {
        guard conflicts > 1 else { return }
        let bound = min(attempt * (1 << min(conflicts - 1, 10)), .seconds(1))
        let microseconds = max(Int(bound / .microseconds(1)), 1_000)
        do {
            try await Task.sleep(for: .microseconds(Int.random(in: 0...microseconds)))
        } catch {
            // Cancelled: run the body again at once; cancellation does not interrupt an update.
        }
    }

    /// Reads the stamp, then the file, keeping the lock file open for the commit.
    @concurrent private func snapshot(decoding: @Sendable (_ stored: Data) throws -> Data) async throws -> Snapshot {
        guard let (lock, lockFile) = try openLockFile(creatingDirectory: true) else {
            throw ValueStoreError(.io, store: label, reason: "the directory could not be created")
        }
        do {
            try OpenUpdate.refuseWrite(to: lockFile, store: label)
            // The stamp first: a file read after it is at least as new as the stamp says.
            let stamp = try readStamp(lock)
            let read = try readWithStatus()
            return Snapshot(
                lock: lock, lockFile: lockFile, stamp: stamp, file: read?.status, stored: read?.data,
                contents: try read.map { try decoding($0.data) })
        } catch {
            unlockAndClose(lock)
            throw error
        }
    }

    /// Stores `contents` under both locks if the file is as `snapshot` read it, and closes the
    /// snapshot's lock file. Returns whether it stored them, or whether this process was the
    /// last to write the file when another writer got in first. `inHeldTurn`: the caller holds
    /// this process's lock for the path already.
    @concurrent private func commit(
        _ contents: Data?,
        over snapshot: Snapshot,
        inHeldTurn: Bool,
        encoding: @Sendable (_ contents: Data) throws -> Data
    ) async throws -> Attempt {
        let encoded: Data?
        do {
            encoded = try contents.map(encoding)
        } catch {
            unlockAndClose(snapshot.lock)
            throw error
        }
        let commit = { () async throws -> Attempt in
            // The lock file's lock is released before the next task of this process takes
            // the in-process lock.
            defer { self.unlockAndClose(snapshot.lock) }
            do {
                if try !self.fileSystem.lock(snapshot.lock, false) {
                    try await self.waitForLock(snapshot.lock)
                }
            } catch {
                throw self.failure("lock '\(self.lockPath)'", error)
            }
            guard try self.isUnchanged(since: snapshot) else {
                return .changed(byThisProcess: Self.isThisProcesses(try self.readStamp(snapshot.lock)))
            }
            self.removeOrphansOnce()
            let stored = Swift.Result { try self.store(encoded) }
            let stamped = Swift.Result { try self.leaveStamp(snapshot.lock) }
            try stored.get()
            try stamped.get()
            return .done(contents)
        }
        return try await inTurn(held: inHeldTurn) { try await commit() }
    }

    /// Whether the locked lock file and the file at the path are as `snapshot` found them.
    private func isUnchanged(since snapshot: Snapshot) throws -> Bool {
        do {
            guard try isStillAtLockPath(snapshot.lockFile) else { return false }
        } catch {
            throw failure("read the lock file's status", error)
        }
        guard try readStamp(snapshot.lock) == snapshot.stamp else { return false }
        let file: FileStatus?
        do {
            file = try fileSystem.pathStatus(path)
        } catch let error as FileSystemError where error.isNotFound {
            file = nil
        } catch {
            throw failure("read the file's status", error)
        }
        switch (file, snapshot.file) {
        case (nil, nil): return true
        case (let now?, let then?):
            guard now.hasSameContents(as: then) else { return false }
            // A time that did not move proves nothing: compare what the body started from.
            guard let read = try readWithStatus() else { return false }
            return read.status.hasSameContents(as: then) && read.data == snapshot.stored
        default: return false
        }
    }

    /// The stamp in the lock file: 0 until a writer leaves one.
    private func readStamp(_ lock: Int32) throws -> UInt64 {
        var stamp: UInt64 = 0
        do {
            _ = try withUnsafeMutableBytes(of: &stamp) { try fileSystem.readAt(lock, $0, 0) }
        } catch {
            throw failure("read the lock file '\(lockPath)'", error)
        }
        return UInt64(littleEndian: stamp)
    }

    /// Leaves a stamp no writer left before in the lock file, so an update that read the file
    /// earlier sees that it may have changed.
    func leaveStamp(_ lock: Int32) throws {
        var stamp = Self.stamps.wrappingAdd(1, ordering: .relaxed).newValue.littleEndian
        do {
            let count = try withUnsafeBytes(of: &stamp) { try fileSystem.writeAt(lock, $0, 0) }
            guard count == MemoryLayout<UInt64>.size else {
                throw FileSystemError(operation: "pwrite (wrote \(count) of 8 bytes)", code: EIO)
            }
        } catch {
            throw failure(
                "stamp the lock file '\(lockPath)' after writing; an update in another process may miss this write",
                error)
        }
    }

    /// Whether `stamp` is one this process left.
    static func isThisProcesses(_ stamp: UInt64) -> Bool {
        let offset = stamp &- firstStamp
        return offset != 0 && offset <= stamps.load(ordering: .relaxed) &- firstStamp
    }

    /// Whether the last writer of the file was this process, by the stamp in its lock file;
    /// `false` when there is none. For a caller that holds the file's locks.
    func lastWriterIsThisProcess() throws -> Bool {
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(lockPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0)
        } catch let error as FileSystemError where error.isNotFound {
            return false
        } catch {
            throw failure("open the lock file '\(lockPath)'", error)
        }
        defer { closeQuietly(descriptor) }
        return Self.isThisProcesses(try readStamp(descriptor))
    }

    /// Where this process's stamps start: random, so that two processes never leave the same one.
    private static let firstStamp = UInt64.random(in: .min ... .max)
    private static let stamps = Atomic<UInt64>(firstStamp)
}
