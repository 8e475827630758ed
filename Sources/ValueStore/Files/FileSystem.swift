package import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The system calls the file stores make, as a struct of closures.
///
/// ``live`` calls the operating system. Tests start from it and replace single operations to
/// force a failure at any step of a save (a failed open, a short write, `ENOSPC`, a failed sync
/// or rename, a permission error) and check that each gives a clear error and loses nothing.
///
/// Watching is part of the witness: ``changes`` is the registry this file system's writers
/// report to and its change streams come from, and it makes its directory watches with the
/// `watchDirectory` it was made with. ``watching(with:)`` gives a copy whose watches a test
/// fakes, so observation tests send directory events instead of waiting for the kernel's.
///
/// Every operation retries `EINTR` itself and reports other failures as ``FileSystemError``.
package struct FileSystem: Sendable {
    /// Opens a file and returns its descriptor.
    package var open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) throws -> Int32
    /// Reads up to `buffer.count` bytes; returns 0 at the end of the file.
    package var read: @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Writes up to `buffer.count` bytes and returns how many were written.
    package var write: @Sendable (_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws -> Int
    /// Reads up to `buffer.count` bytes at `offset`, leaving the file offset alone (`pread`).
    package var readAt:
        @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int64) throws -> Int
    /// Writes up to `buffer.count` bytes at `offset`, leaving the file offset alone (`pwrite`).
    package var writeAt:
        @Sendable (_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, _ offset: Int64) throws -> Int
    /// What an open file is: its identity, type, owner, permissions and size (`fstat`).
    package var status: @Sendable (_ descriptor: Int32) throws -> FileStatus
    /// What the file at a path is, following symlinks (`stat`).
    package var pathStatus: @Sendable (_ path: String) throws -> FileStatus
    /// Flushes a file's data and metadata to stable storage (`F_FULLFSYNC` on Darwin).
    package var synchronize: @Sendable (_ descriptor: Int32) throws -> Void
    /// Flushes a file's data, and the size that reads it, to stable storage (`fdatasync`;
    /// `F_FULLFSYNC` on Darwin): cheaper than ``synchronize`` where only the data matter.
    package var synchronizeData: @Sendable (_ descriptor: Int32) throws -> Void
    /// Cuts or extends an open file to `length` bytes (`ftruncate`).
    package var truncate: @Sendable (_ descriptor: Int32, _ length: Int64) throws -> Void
    /// Closes a descriptor.
    package var close: @Sendable (_ descriptor: Int32) throws -> Void
    /// Atomically replaces `destination` with `source`.
    package var rename: @Sendable (_ source: String, _ destination: String) throws -> Void
    /// Removes a file.
    package var unlink: @Sendable (_ path: String) throws -> Void
    /// Creates one directory.
    package var makeDirectory: @Sendable (_ path: String, _ mode: mode_t) throws -> Void
    /// Takes an exclusive advisory lock on an open file; returns `false` when `wait` is `false`
    /// and another descriptor holds it. Release it with ``unlock``: closing the descriptor
    /// releases it only once no copy of it is open, and a child being spawned holds copies.
    package var lock: @Sendable (_ descriptor: Int32, _ wait: Bool) throws -> Bool
    /// Releases the lock ``lock`` took, for every copy of the descriptor.
    package var unlock: @Sendable (_ descriptor: Int32) throws -> Void
    /// The names in a directory, without `.` and `..`.
    package var contentsOfDirectory: @Sendable (_ path: String) throws -> [String]
    /// A file's permission bits.
    package var permissions: @Sendable (_ path: String) throws -> UInt16
    /// What the symbolic link at `path` names (`lstat`, then `readlink`); `nil` when `path` is
    /// not a link, or names nothing.
    package var linkTarget: @Sendable (_ path: String) throws -> String?
    /// The change signals of this file system's paths, and the directory watches they run on.
    var changes: FileChanges

    /// Writes all of `buffer` at `offset` (``writeAt``, again for the rest after a short write);
    /// throws `EIO` when a write makes no progress.
    package func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws {
        var written = 0
        while written < buffer.count {
            let count = try writeAt(
                descriptor, UnsafeRawBufferPointer(rebasing: buffer[written...]), offset + Int64(written))
            guard count > 0 else {
                throw FileSystemError(operation: "pwrite (wrote \(written) of \(buffer.count) bytes)", code: EIO)
            }
            written += count
        }
    }

    /// This file system, watching directories with `watchDirectory` through a change registry of
    /// its own.
    func watching(with watchDirectory: @escaping FileChanges.WatchDirectory) -> Self {
        var copy = self
        copy.changes = FileChanges(watchDirectory: watchDirectory)
        return copy
    }
}

/// What `stat` says about a file: enough to tell which file it is and whether to trust it.
package struct FileStatus: Sendable, Equatable {
    package var device: UInt64
    package var inode: UInt64
    /// The file's type bits (`st_mode & S_IFMT`).
    package var type: UInt32
    /// The permission bits (`st_mode & 0o7777`).
    package var permissions: UInt16
    package var owner: UInt32
    package var size: Int
    /// When the contents last changed, in nanoseconds since 1970.
    package var modified: Int64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        type = UInt32(status.st_mode) & UInt32(S_IFMT)
        permissions = UInt16(status.st_mode & 0o7777)
        owner = UInt32(status.st_uid)
        size = Int(status.st_size)
        #if canImport(Darwin)
        modified = Int64(status.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(status.st_mtimespec.tv_nsec)
        #else
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        #endif
    }

    /// Whether both describe the same contents: the same file, size and modification time.
    package func hasSameContents(as other: Self) -> Bool {
        isSameFile(as: other) && size == other.size && modified == other.modified
    }

    package var isRegularFile: Bool { type == UInt32(S_IFREG) }

    /// Whether both describe the same file: the same device and inode.
    package func isSameFile(as other: Self) -> Bool {
        device == other.device && inode == other.inode
    }

    /// The type in words, for errors: "a FIFO", "a character device".
    var typeDescription: String {
        switch type {
        case UInt32(S_IFREG): "a regular file"
        case UInt32(S_IFDIR): "a directory"
        case UInt32(S_IFIFO): "a FIFO"
        case UInt32(S_IFCHR): "a character device"
        case UInt32(S_IFBLK): "a block device"
        case UInt32(S_IFSOCK): "a socket"
        case UInt32(S_IFLNK): "a symbolic link"
        default: "a file of unknown type"
        }
    }
}

/// A failed system call: which one, and the `errno` it set.
package struct FileSystemError: Error, Equatable, CustomStringConvertible {
    package var operation: String
    package var code: Int32

    /// The current `errno`, for the named operation.
    package static func last(_ operation: String) -> Self {
        Self(operation: operation, code: errno)
    }

    /// An error for `operation` that set `code`: what a test's file system throws.
    package init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    package var isNotFound: Bool { code == ENOENT }

    package var description: String {
        "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

extension FileSystem {
    /// The operating system's file system.
    package static let live = FileSystem(
        open: { path, flags, mode in
            try retryingInterrupts("open") { systemOpen(path, flags, mode) }
        },
        read: { descriptor, buffer in
            try retryingInterrupts("read") { systemRead(descriptor, buffer.baseAddress, buffer.count) }
        },
        write: { descriptor, buffer in
            try retryingInterrupts("write") { systemWrite(descriptor, buffer.baseAddress, buffer.count) }
        },
        readAt: { descriptor, buffer, offset in
            try retryingInterrupts("pread") { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
        },
        writeAt: { descriptor, buffer, offset in
            try retryingInterrupts("pwrite") { pwrite(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
        },
        status: { descriptor in
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw FileSystemError.last("fstat") }
            return FileStatus(status)
        },
        pathStatus: { path in
            var status = stat()
            guard stat(path, &status) == 0 else { throw FileSystemError.last("stat") }
            return FileStatus(status)
        },
        synchronize: { descriptor in
            #if canImport(Darwin)
            // F_FULLFSYNC asks the drive to flush its cache too; some file systems refuse it.
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
            #endif
            _ = try retryingInterrupts("fsync") { fsync(descriptor) }
        },
        synchronizeData: { descriptor in
            #if canImport(Darwin)
            // F_FULLFSYNC asks the drive to flush its cache too; some file systems refuse it.
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
            _ = try retryingInterrupts("fsync") { fsync(descriptor) }
            #else
            _ = try retryingInterrupts("fdatasync") { fdatasync(descriptor) }
            #endif
        },
        truncate: { descriptor, length in
            _ = try retryingInterrupts("ftruncate") { ftruncate(descriptor, off_t(length)) }
        },
        close: { descriptor in
            // Retrying close after EINTR may close a descriptor another thread just opened.
            guard systemClose(descriptor) == 0 || errno == EINTR else { throw FileSystemError.last("close") }
        },
        rename: { source, destination in
            guard systemRename(source, destination) == 0 else { throw FileSystemError.last("rename") }
        },
        unlink: { path in
            guard systemUnlink(path) == 0 else { throw FileSystemError.last("unlink") }
        },
        makeDirectory: { path, mode in
            guard mkdir(path, mode) == 0 else { throw FileSystemError.last("mkdir") }
        },
        lock: { descriptor, wait in
            let operation = LOCK_EX | (wait ? 0 : LOCK_NB)
            while flock(descriptor, operation) != 0 {
                switch errno {
                case EINTR: continue
                case EWOULDBLOCK: return false
                default: throw FileSystemError.last("flock")
                }
            }
            return true
        },
        unlock: { descriptor in
            _ = try retryingInterrupts("flock") { flock(descriptor, LOCK_UN) }
        },
        contentsOfDirectory: { path in
            guard let directory = opendir(path) else { throw FileSystemError.last("opendir") }
            defer { closedir(directory) }
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                    String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                if name != "." && name != ".." {
                    names.append(name)
                }
            }
            return names
        },
        permissions: { path in
            var status = stat()
            guard stat(path, &status) == 0 else { throw FileSystemError.last("stat") }
            return UInt16(status.st_mode & 0o7777)
        },
        linkTarget: { path in
            var status = stat()
            guard lstat(path, &status) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw FileSystemError.last("lstat")
            }
            guard status.st_mode & S_IFMT == S_IFLNK else { return nil }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(path, &buffer, buffer.count - 1)
            guard count >= 0 else { throw FileSystemError.last("readlink") }
            return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        },
        changes: .shared
    )
}

/// Runs a system call until it is not interrupted; throws its `errno` when it fails.
private func retryingInterrupts<Result: BinaryInteger>(
    _ operation: String,
    _ call: () -> Result
) throws -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno != EINTR { throw FileSystemError.last(operation) }
    }
}

// The C functions, named apart from the witness's closures of the same names.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func systemUnlink(_ path: String) -> Int32 { unlink(path) }
