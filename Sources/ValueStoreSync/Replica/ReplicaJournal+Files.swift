import Foundation
import ValueStore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// The journal's files, through its `FileSystem`: see ``ReplicaJournal``.
extension ReplicaJournal {
    /// Opens the journal's file, or makes it and flushes its folder, so that the file is there
    /// after a crash; in a folder this process may only read, opens it to read (`-1`: there is
    /// none), and says so.
    func openOrCreate() throws -> (descriptor: Int32, isWritable: Bool) {
        let refusal: FileSystemError
        do {
            let made = try fileSystem.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
            do {
                try synchronizeFolder()
            } catch {
                closeAfterUse(made)
                throw failure("was made, but its folder could not be flushed (errno \(Self.code(of: error)))")
            }
            return (made, true)
        } catch let error as FileSystemError {
            refusal = error
        }
        if Self.isDenied(refusal.code) && (try? fileSystem.pathStatus(path)) == nil {
            return (-1, false)  // no journal, and none can be made: nothing to read
        }
        guard refusal.code == EEXIST || Self.isDenied(refusal.code) else {
            throw failure("could not be made (errno \(refusal.code))")
        }
        do {
            return (try fileSystem.open(path, O_RDWR | O_CLOEXEC, permissions), true)
        } catch let error as FileSystemError where Self.isDenied(error.code) {
            do {
                return (try fileSystem.open(path, O_RDONLY | O_CLOEXEC, permissions), false)
            } catch {
                throw failure("could not be opened to read (errno \(Self.code(of: error)))")
            }
        } catch {
            throw failure("could not be opened (errno \(Self.code(of: error)))")
        }
    }

    /// Flushes the journal's folder, so that a journal just made is there after a crash.
    func synchronizeFolder() throws {
        let folder = try fileSystem.open((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC, 0)
        defer { closeAfterUse(folder) }
        try fileSystem.synchronize(folder)
    }

    /// Whether `code` says this process may not write there.
    static func isDenied(_ code: Int32) -> Bool {
        code == EACCES || code == EROFS || code == EPERM
    }

    /// Keeps the bytes an incomplete append left in a file of their own beside the journal.
    func keep(_ tail: ArraySlice<UInt8>) throws {
        let kept = path + ".cut-" + UUID().uuidString
        do {
            let descriptor = try fileSystem.open(kept, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
            defer { closeAfterUse(descriptor) }
            try Array(tail).withUnsafeBytes { try fileSystem.writeAll(descriptor, $0, at: 0) }
            try fileSystem.synchronizeData(descriptor)
        } catch {
            throw failure("could not keep its incomplete last entry (errno \(Self.code(of: error)))")
        }
    }

    /// Cuts the journal open at `descriptor` off at `length` bytes, and flushes the cut: what
    /// followed (an incomplete entry, a failed append) is gone for good, crash or not.
    func cut(_ descriptor: Int32, at length: Int) throws {
        try fileSystem.truncate(descriptor, Int64(length))
        try fileSystem.synchronizeData(descriptor)
    }

    /// Reads the whole file open at `descriptor`.
    func readAll(_ descriptor: Int32) throws -> [UInt8] {
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes {
                    try fileSystem.readAt(descriptor, $0, Int64(contents.count))
                }
            } catch {
                throw failure("could not be read (errno \(Self.code(of: error)))")
            }
            if count == 0 { return contents }
            contents += buffer.prefix(count)
        }
    }

    /// Closes a descriptor the journal is done with. Its writes were flushed, or reported as
    /// failed, before: a failed close loses nothing of them.
    func closeAfterUse(_ descriptor: Int32) {
        do {
            try fileSystem.close(descriptor)
        } catch {
            // Nothing to report: see above.
        }
    }

    /// The `errno` a failed system call set.
    static func code(of error: any Error) -> Int32 {
        (error as? FileSystemError)?.code ?? EIO
    }
}
