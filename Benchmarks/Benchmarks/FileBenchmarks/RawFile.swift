import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The floor for the durable file stores: one file replaced and read with system calls and
/// nothing else.
///
/// A durable replace is the least a crash-safe save can do: create a temporary file in the same
/// directory, write it, sync it, close it, rename it over the target, and sync the directory so
/// the rename itself survives a power loss. A read opens the file, asks its size, reads it into
/// one buffer of that size and closes it.
struct RawFile: Sendable {
    let path: String
    let temporaryPath: String
    let directory: String

    init(_ url: URL) {
        path = url.path(percentEncoded: false)
        temporaryPath = url.deletingLastPathComponent().appending(path: ".\(url.lastPathComponent).tmp")
            .path(percentEncoded: false)
        directory = url.deletingLastPathComponent().path(percentEncoded: false)
    }

    /// Replaces the file with `bytes`, atomically and durably.
    func replace(with bytes: Data) throws {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        let descriptor = try check("open", open(temporaryPath, flags, 0o644))
        try bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                written += try check("write", write(descriptor, buffer.baseAddress! + written, buffer.count - written))
            }
        }
        try synchronize(descriptor)
        try check("close", close(descriptor))
        try check("rename", rename(temporaryPath, path))
        let directoryDescriptor = try check("open", open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        try synchronize(directoryDescriptor)
        try check("close", close(directoryDescriptor))
    }

    /// Writes `bytes` over the file's start in place, with no `fsync`: for rows that change a
    /// file between loads and must not measure a durable write. The file keeps its length, so
    /// `bytes` must be as long as it is.
    func overwrite(with bytes: Data) throws {
        let descriptor = try check("open", open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC))
        try bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                written += try check(
                    "pwrite", pwrite(descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(written)))
            }
        }
        try check("close", close(descriptor))
    }

    /// The file's bytes, read into one buffer of the size `fstat` reports.
    func contents() throws -> Data {
        let descriptor = try check("open", open(path, O_RDONLY | O_CLOEXEC))
        var status = stat()
        try check("fstat", fstat(descriptor, &status))
        let size = Int(status.st_size)
        guard let buffer = malloc(max(size, 1)) else {
            throw SystemCallFailed(call: "malloc", code: ENOMEM)
        }
        var filled = 0
        while filled < size {
            let count = try check("read", read(descriptor, buffer + filled, size - filled))
            if count == 0 { break }
            filled += count
        }
        try check("close", close(descriptor))
        return Data(bytesNoCopy: buffer, count: filled, deallocator: .free)
    }

    /// Replaces the file with what `change` makes of its bytes, holding an exclusive `flock` on a
    /// lock file beside it from the read to the durable replace: the least an update that is
    /// atomic across processes can do.
    func update(_ change: (_ bytes: Data) throws -> Data) throws {
        let lockPath = directory + "/." + (path as NSString).lastPathComponent + ".lock"
        let lock = try check("open", open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644))
        defer { close(lock) }
        try check("flock", flock(lock, LOCK_EX))
        try replace(with: change(contents()))
    }

    /// Flushes a file to stable storage the way the library does: `F_FULLFSYNC` where it exists.
    private func synchronize(_ descriptor: Int32) throws {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        try check("fsync", fsync(descriptor))
    }
}

/// A system call that failed, and the `errno` it set.
struct SystemCallFailed: Error, CustomStringConvertible {
    var call: String
    var code: Int32

    var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Returns a system call's result, or throws its `errno` when it reports failure.
@discardableResult
private func check<Result: BinaryInteger>(_ call: String, _ result: Result) throws -> Result {
    guard result >= 0 else { throw SystemCallFailed(call: call, code: errno) }
    return result
}
