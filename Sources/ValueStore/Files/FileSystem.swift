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
/// Every operation retries `EINTR` itself and reports other failures as ``FileSystemError``.
struct FileSystem: Sendable {
    /// Opens a file and returns its descriptor.
    var open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) throws -> Int32
    /// Reads up to `buffer.count` bytes; returns 0 at the end of the file.
    var read: @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Writes up to `buffer.count` bytes and returns how many were written.
    var write: @Sendable (_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws -> Int
    /// The size of an open file in bytes.
    var size: @Sendable (_ descriptor: Int32) throws -> Int
    /// Flushes a file's data and metadata to stable storage (`F_FULLFSYNC` on Darwin).
    var synchronize: @Sendable (_ descriptor: Int32) throws -> Void
    /// Closes a descriptor.
    var close: @Sendable (_ descriptor: Int32) throws -> Void
    /// Atomically replaces `destination` with `source`.
    var rename: @Sendable (_ source: String, _ destination: String) throws -> Void
    /// Removes a file.
    var unlink: @Sendable (_ path: String) throws -> Void
    /// Creates one directory.
    var makeDirectory: @Sendable (_ path: String, _ mode: mode_t) throws -> Void
    /// Takes an exclusive advisory lock on an open file; returns `false` when `wait` is `false`
    /// and another descriptor holds it. Closing the descriptor releases the lock.
    var lock: @Sendable (_ descriptor: Int32, _ wait: Bool) throws -> Bool
    /// The names in a directory, without `.` and `..`.
    var contentsOfDirectory: @Sendable (_ path: String) throws -> [String]
    /// A file's permission bits.
    var permissions: @Sendable (_ path: String) throws -> UInt16
    /// The owner and mode of an open file (`fstat`), so a check looks at the file that was
    /// opened, not at whatever the path names a moment later.
    var status: @Sendable (_ descriptor: Int32) throws -> FileStatus = { descriptor in
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileSystemError.last("fstat") }
        return FileStatus(owner: UInt32(status.st_uid), mode: UInt32(status.st_mode))
    }
}

/// What `fstat` says about an open file: who owns it, and its type and permission bits.
struct FileStatus: Equatable, Sendable {
    /// The owner's user id.
    var owner: UInt32
    /// The type and permission bits (`st_mode`).
    var mode: UInt32

    /// The permission bits, with set-id and sticky bits.
    var permissions: UInt16 { UInt16(mode & 0o7777) }
}

/// A failed system call: which one, and the `errno` it set.
struct FileSystemError: Error, Equatable, CustomStringConvertible {
    var operation: String
    var code: Int32

    /// The current `errno`, for the named operation.
    static func last(_ operation: String) -> Self {
        Self(operation: operation, code: errno)
    }

    var isNotFound: Bool { code == ENOENT }

    var description: String {
        "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}

extension FileSystem {
    /// The operating system's file system.
    static let live = FileSystem(
        open: { path, flags, mode in
            try retryingInterrupts("open") { systemOpen(path, flags, mode) }
        },
        read: { descriptor, buffer in
            try retryingInterrupts("read") { systemRead(descriptor, buffer.baseAddress, buffer.count) }
        },
        write: { descriptor, buffer in
            try retryingInterrupts("write") { systemWrite(descriptor, buffer.baseAddress, buffer.count) }
        },
        size: { descriptor in
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw FileSystemError.last("fstat") }
            return Int(status.st_size)
        },
        synchronize: { descriptor in
            #if canImport(Darwin)
            // F_FULLFSYNC asks the drive to flush its cache too; some file systems refuse it.
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
            #endif
            _ = try retryingInterrupts("fsync") { fsync(descriptor) }
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
        }
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
