import Foundation

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
            if let unreachable = unreachableTarget() { throw unreachable }
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
