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
        while true {
            let started = ContinuousClock.now
            let snapshot = try await snapshot(decoding: decoding)
            var contents = snapshot.contents
            do {
                try await OpenUpdate.running(lockFile: snapshot.lockFile) { try await body(&contents) }
            } catch {
                await releaseFileLock(snapshot.lock)
                throw error
            }
            guard contents != snapshot.contents else {
                await releaseFileLock(snapshot.lock)
                return contents
            }
            // A turn of its own in this process's queue for the file: saves that arrive during
            // the commit share the one after it.
            let committed = try await CommitQueue.shared.exclusive(commitKey) {
                try await commit(contents, over: snapshot, encoding: encoding)
            }
            if committed {
                return contents
            }
            conflicts += 1
            await Self.backOff(after: conflicts, attempt: started.duration(to: .now))
        }
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
    /// snapshot's lock file. Returns whether it stored them: `false` when another writer got in
    /// first.
    @concurrent private func commit(
        _ contents: Data?,
        over snapshot: Snapshot,
        encoding: @Sendable (_ contents: Data) throws -> Data
    ) async throws -> Bool {
        let encoded: Data?
        do {
            encoded = try contents.map(encoding)
        } catch {
            unlockAndClose(snapshot.lock)
            throw error
        }
        return try await PathLocks.shared.withLock(path) {
            // The lock file's lock is released before the next task of this process takes
            // the in-process lock.
            defer { unlockAndClose(snapshot.lock) }
            do {
                if try !fileSystem.lock(snapshot.lock, false) {
                    try await waitForLock(snapshot.lock)
                }
            } catch {
                throw failure("lock '\(lockPath)'", error)
            }
            guard try isUnchanged(since: snapshot) else { return false }
            removeOrphansOnce()
            let stored = Swift.Result { try store(encoded) }
            let stamped = Swift.Result { try leaveStamp(snapshot.lock) }
            try stored.get()
            try stamped.get()
            return true
        }
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

    /// Stamps from a random start, so that two processes never leave the same one.
    private static let stamps = Atomic<UInt64>(UInt64.random(in: .min ... .max))
}
