import Foundation
import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// One file, replaced atomically and durably, and locked against writers in this process and
/// in others.
///
/// A save writes a new temporary file next to the target (created exclusively, never through a
/// symlink), writes every byte, syncs it, renames it over the target and syncs the directory.
/// A crash at any instant leaves the old file or the new one, complete. Writers hold the
/// in-process ``PathLocks`` entry and an advisory `flock` on a sidecar `.<name>.lock` file;
/// readers take no lock, since a rename never exposes a partial file.
///
/// Temporary files are named `.<name>.tmp-<16 hex digits>`; they exist only while a writer holds
/// the lock, so the first writer of a path in each process deletes any it finds: they were
/// orphaned by a crash. Only names of exactly that shape are deleted, never another store's files.
/// Loads read only the target's name, so an orphan is never mistaken for data.
///
/// A name too long to leave room for those suffixes (over 233 bytes) gets sidecar names built
/// from its start and a hash of the whole name, so every name the file system accepts can be
/// saved. A path that is not valid UTF-8 cannot be named exactly, so every operation refuses it
/// with ``ValueStoreError/Code/invalidConfiguration`` rather than call an existing file absent.
struct DurableFile: Sendable {
    let path: String
    let directory: String
    let name: String
    private(set) var options: FileOptions
    let fileSystem: FileSystem
    /// What every operation throws when the URL cannot be used as a path; `nil` when it can.
    let invalidPath: ValueStoreError?
    /// The start of the sidecar files' names: the name itself, or a shortened form of a long one.
    let sidecarStem: String

    /// The longest file name the file systems we run on accept, in bytes.
    static let maximumNameLength = 255
    /// The most bytes a load reads: a file at the path that is larger than this is refused.
    static let maximumSize = 1 << 30

    init(_ url: URL, options: FileOptions, fileSystem: FileSystem) {
        let url = url.standardizedFileURL
        path = url.path(percentEncoded: false)
        name = url.lastPathComponent
        var directory = url.deletingLastPathComponent().path(percentEncoded: false)
        while directory.count > 1 && directory.hasSuffix("/") {
            directory.removeLast()
        }
        self.directory = directory
        self.options = options
        self.fileSystem = fileSystem
        sidecarStem = Self.sidecarStem(for: name)
        invalidPath = Self.validate(url, path: path)
    }

    /// The same file with other options.
    init(copying file: DurableFile, options: FileOptions) {
        self = file
        self.options = options
    }

    /// Refuses what cannot be named exactly: a URL that is not a file URL, and a path whose bytes
    /// are not UTF-8, which Foundation would turn into other bytes or an empty path.
    private static func validate(_ url: URL, path: String) -> ValueStoreError? {
        let encoded = url.path(percentEncoded: true)
        guard url.isFileURL else {
            return ValueStoreError(
                .invalidConfiguration, store: "file '\(url)'", reason: "a file store needs a file URL")
        }
        guard let decoded = encoded.removingPercentEncoding, decoded == path, !path.isEmpty, !path.contains("\u{FFFD}")
        else {
            return ValueStoreError(
                .invalidConfiguration,
                store: "file '\(encoded)'",
                reason: "the path is not valid UTF-8, so it cannot be named exactly; rename the file"
            )
        }
        return nil
    }

    /// The name itself when `.<name>.tmp-<16 hex digits>` fits in a file name; otherwise the
    /// name's first characters, `~` and a hash of the whole name.
    static func sidecarStem(for name: String) -> String {
        let suffixLength = ".".utf8.count + ".tmp-".utf8.count + 16
        guard name.utf8.count + suffixLength > maximumNameLength else { return name }
        let hash = "~" + hexadecimal(fnv1a(name.utf8))
        var stem = ""
        for character in name {
            if stem.utf8.count + character.utf8.count + hash.utf8.count + suffixLength > maximumNameLength {
                break
            }
            stem.append(character)
        }
        return stem + hash
    }

    /// A 64-bit FNV-1a hash: stable across processes and runs, unlike `Hasher`.
    private static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }

    /// Exactly 16 lowercase hexadecimal digits.
    static func hexadecimal(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Throws the reason the path cannot be used, if there is one.
    func checkPath() throws {
        if let invalidPath {
            throw invalidPath
        }
    }

    /// Signals each change to the file, by this process or another (see ``FileChanges``).
    func changeSignals() -> AsyncStream<Void> {
        FileChanges.shared.signals(path: path, directory: directory)
    }

    /// How errors name the store.
    var label: String { "file '\(path)'" }

    var lockPath: String { sibling(".\(sidecarStem).lock") }

    var temporaryPrefix: String { ".\(sidecarStem).tmp-" }

    /// Whether `entry` is a temporary file this library created for this path: the prefix and
    /// then hexadecimal digits only (16 of them; releases before 1.1 wrote 1 to 16).
    func isTemporaryFile(_ entry: String) -> Bool {
        guard entry.hasPrefix(temporaryPrefix) else { return false }
        let digits = entry.utf8.dropFirst(temporaryPrefix.utf8.count)
        return (1...16).contains(digits.count)
            && digits.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }

    private var isDurable: Bool { options.durability == .durable }

    private func sibling(_ name: String) -> String {
        directory == "/" ? "/\(name)" : "\(directory)/\(name)"
    }

    /// An I/O error naming this file, the step that failed and why.
    func failure(_ step: String, _ error: any Error) -> ValueStoreError {
        if let error = error as? ValueStoreError {
            return error.naming(label)
        }
        return ValueStoreError(.io, store: label, reason: "could not \(step): \(error)", underlyingError: error)
    }
}

// MARK: - Reading

extension DurableFile {
    /// The file's bytes, or `nil` when there is no file. `check` inspects the open descriptor
    /// before anything is read (the key file's owner and mode) and may refuse it by throwing.
    ///
    /// Opens without blocking and without becoming a controlling terminal, and refuses anything
    /// but a regular file, so a FIFO or a device at the path fails at once instead of hanging or
    /// reading forever. A file larger than ``maximumSize`` is refused too.
    func read(checking check: ((_ descriptor: Int32) throws -> Void)? = nil) throws -> Data? {
        try readWithStatus(checking: check)?.data
    }

    /// ``read(checking:)``, with what `fstat` said about the file that was read.
    func readWithStatus(
        checking check: ((_ descriptor: Int32) throws -> Void)? = nil
    ) throws -> (data: Data, status: FileStatus)? {
        try checkPath()
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0)
        } catch let error as FileSystemError where error.isNotFound {
            return nil
        } catch {
            throw failure("open the file for reading", error)
        }
        defer { closeQuietly(descriptor) }
        let status: FileStatus
        do {
            status = try fileSystem.status(descriptor)
        } catch {
            throw failure("read the file's status", error)
        }
        guard status.isRegularFile else {
            throw ValueStoreError(
                .io, store: label,
                reason: "the path holds \(status.typeDescription), not a regular file; nothing was read")
        }
        guard status.size <= Self.maximumSize else {
            throw ValueStoreError(
                .io, store: label,
                reason: "the file holds \(status.size) bytes, more than the \(Self.maximumSize) a store reads")
        }
        try check?(descriptor)
        do {
            // One byte more than the size, uninitialized: filling it means the file grew since
            // `fstat` (another tool appending), and only then does the buffer grow, up to the
            // most a store reads.
            var capacity = status.size + 1
            var buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
            var filled = 0
            do {
                while true {
                    if filled == capacity {
                        guard capacity <= Self.maximumSize else {
                            throw ValueStoreError(
                                .io, store: label,
                                reason:
                                    "the file grew past the \(Self.maximumSize) bytes a store reads while it was read")
                        }
                        let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 1)
                        grown.copyMemory(from: buffer, byteCount: filled)
                        buffer.deallocate()
                        buffer = grown
                        capacity *= 2
                    }
                    let count = try fileSystem.read(
                        descriptor, UnsafeMutableRawBufferPointer(start: buffer + filled, count: capacity - filled))
                    if count == 0 { break }
                    filled += count
                }
            } catch {
                buffer.deallocate()
                throw error
            }
            let data = Data(
                bytesNoCopy: buffer, count: filled, deallocator: .custom { pointer, _ in pointer.deallocate() })
            return (data, status)
        } catch {
            throw failure("read the file", error)
        }
    }

    /// Reads off the caller's executor.
    @concurrent func readConcurrently() async throws -> Data? {
        try read()
    }
}

// MARK: - Writing (the lock is held)

extension DurableFile {
    /// Replaces the file with `data`: temporary file, write, sync, rename, sync the directory.
    func write(_ data: Data) throws {
        let temporary = sibling(temporaryPrefix + Self.hexadecimal(UInt64.random(in: .min ... .max)))
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(
                temporary,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                mode_t(options.permissions)
            )
        } catch {
            throw failure("create the temporary file '\(temporary)'", error)
        }
        var isOpen = true
        var step = "write the temporary file"
        do {
            try writeAll(data, to: descriptor)
            if isDurable {
                step = "sync the temporary file to disk"
                try fileSystem.synchronize(descriptor)
            }
            step = "close the temporary file"
            isOpen = false
            try fileSystem.close(descriptor)
            step = "rename the temporary file over the target"
            FileChanges.shared.willReplace(path, with: temporary)
            try fileSystem.rename(temporary, path)
            FileChanges.shared.didChange(path)
        } catch {
            if isOpen {
                closeQuietly(descriptor)
            }
            removeQuietly(temporary)
            throw failure(step, error)
        }
        try synchronizeDirectory(after: "replacing the file; the new value may not survive a power loss")
    }

    /// Removes the file; removing a missing file succeeds.
    func delete() throws {
        do {
            FileChanges.shared.willRemove(path)
            try fileSystem.unlink(path)
            FileChanges.shared.didChange(path)
        } catch let error as FileSystemError where error.isNotFound {
            return
        } catch {
            throw failure("remove the file", error)
        }
        try synchronizeDirectory(after: "removing the file; the removal may not survive a power loss")
    }

    /// Writes `data`, or deletes the file for `nil`.
    func store(_ data: Data?) throws {
        if let data {
            try write(data)
        } else {
            try delete()
        }
    }

    /// Moves the file aside to `<name>.corrupt-<time>-<random>` and returns the new path.
    func moveAside() throws -> String {
        let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
            .replacingOccurrences(of: ":", with: "")
        let aside = sibling("\(name).corrupt-\(stamp)-\(String(UInt16.random(in: .min ... .max), radix: 16))")
        do {
            FileChanges.shared.willRemove(path)
            try fileSystem.rename(path, aside)
            FileChanges.shared.didChange(path)
        } catch let error as FileSystemError where error.isNotFound {
            throw ValueStoreError(.notFound, store: label, reason: "there is no file to move aside")
        } catch {
            throw failure("move the file aside to '\(aside)'", error)
        }
        try synchronizeDirectory(after: "moving the file aside")
        return aside
    }

    private func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = try fileSystem.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer[written...]))
                guard count > 0 else {
                    throw FileSystemError(operation: "write (wrote \(written) of \(buffer.count) bytes)", code: EIO)
                }
                written += count
            }
        }
    }

    /// Syncs the file's directory, when durable, so a rename or unlink in it survives a power
    /// loss.
    private func synchronizeDirectory(after change: String) throws {
        try synchronize(directory: directory, step: "sync the directory after \(change)")
    }

    /// Syncs a directory, when durable, reporting a failure as `step`.
    private func synchronize(directory: String, step: String) throws {
        guard isDurable else { return }
        do {
            let descriptor = try fileSystem.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            defer { closeQuietly(descriptor) }
            try fileSystem.synchronize(descriptor)
        } catch {
            throw failure(step, error)
        }
    }

    /// Closes a descriptor whose data is already safe or abandoned, so a failure loses nothing.
    private func closeQuietly(_ descriptor: Int32) {
        do {
            try fileSystem.close(descriptor)
        } catch {
            // Nothing to recover: the descriptor was only read, synced already, or abandoned.
        }
    }

    /// Removes an abandoned temporary file; a leftover is cleaned up by a later writer.
    private func removeQuietly(_ path: String) {
        do {
            try fileSystem.unlink(path)
        } catch {
            // An orphan is never read as data, and the next process to write removes it.
        }
    }
}

// MARK: - Whole operations, taking the locks

// Each runs entirely on the global concurrent executor: they block (open, read, write, fsync,
// rename, unlink), so they never run on a caller's executor, which may be the main actor.
extension DurableFile {
    /// Replaces the file with `data` under the locks.
    @concurrent func save(_ data: Data) async throws {
        try await exclusively { _ in try write(data) }
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
        // Nothing to remove: return without creating the lock file. A save that races with this
        // check is ordered after the remove.
        guard try exists() else { return }
        try await exclusively(creatingDirectory: false) { directoryExists in
            if directoryExists {
                try delete()
            }
        }
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

// MARK: - Updating, with no lock held while the body runs

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
        /// The file's contents, decoded; `nil` when there was no file.
        let contents: Data?
    }

    /// The store's update: reads the contents, lets `body` change them on the caller's
    /// executor, and stores the result only if it changed (`nil` deletes), returning it.
    ///
    /// No lock is held while `body` runs, since it may await anything, and iOS terminates a
    /// suspended app that holds a file lock in a shared container. The commit takes both locks
    /// and writes only if nothing changed since the read: the same stamp in the lock file (every
    /// writer leaves a new one) and the same file at the path (device, inode, size and
    /// modification time, for writers that leave no stamp). Otherwise it reads again and runs
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
            if try await commit(contents, over: snapshot, encoding: encoding) {
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
                lock: lock, lockFile: lockFile, stamp: stamp, file: read?.status,
                contents: try read.map { try decoding($0.data) })
        } catch {
            closeQuietly(lock)
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
            closeQuietly(snapshot.lock)
            throw error
        }
        return try await PathLocks.shared.withLock(path) {
            // Closing the lock file releases its lock, before the next task of this process
            // takes the in-process lock.
            defer { closeQuietly(snapshot.lock) }
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
        case (let now?, let then?): return now.hasSameContents(as: then)
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
    private func leaveStamp(_ lock: Int32) throws {
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

// MARK: - Locking

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
    func exclusively<Result>(
        creatingDirectory: Bool = true,
        _ body: (_ directoryExists: Bool) async throws -> Result
    ) async throws -> Result {
        try checkPath()
        return try await PathLocks.shared.withLock(path) {
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
    }

    /// Leaves a new stamp in the lock file, then closes it, which releases its lock.
    @concurrent private func stampAndReleaseFileLock(_ descriptor: Int32) async -> Swift.Result<Void, any Error> {
        let stamped = Swift.Result { try leaveStamp(descriptor) }
        closeQuietly(descriptor)
        return stamped
    }

    /// Closes a lock file, which releases its lock if it holds it; it holds no data to lose.
    @concurrent func releaseFileLock(_ descriptor: Int32) async {
        closeQuietly(descriptor)
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
                    closeQuietly(descriptor)
                    continue
                }
                removeOrphansOnce()
                return descriptor
            } catch {
                closeQuietly(descriptor)
                throw failure("lock '\(lockPath)'", error)
            }
        }
        throw ValueStoreError(
            .io, store: label, reason: "the lock file '\(lockPath)' was replaced every time it was locked")
    }

    /// Opens the lock file, creating it and the directory as needed, and says which file it is;
    /// `nil` when the directory is missing and may not be created. Refuses anything at the path
    /// but a regular file.
    private func openLockFile(creatingDirectory: Bool) throws -> (descriptor: Int32, status: FileStatus)? {
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
    private func isStillAtLockPath(_ locked: FileStatus) throws -> Bool {
        do {
            return try fileSystem.pathStatus(lockPath).isSameFile(as: locked)
        } catch let error as FileSystemError where error.isNotFound {
            return false
        }
    }

    /// Waits for a lock another process holds, on a thread of its own, so the wait never blocks
    /// the threads Swift concurrency runs tasks on.
    private func waitForLock(_ descriptor: Int32) async throws {
        let fileSystem = fileSystem
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                do {
                    _ = try fileSystem.lock(descriptor, true)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
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
    private func removeOrphansOnce() {
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
