import Foundation
import Synchronization
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

/// The replica's write-ahead journal, `sync.journal` beside its settings file: every commit is
/// one entry appended to it and flushed (`fdatasync`; `F_FULLFSYNC` on Apple platforms), which
/// costs a fraction of rewriting the settings file (a new file, its flush, a rename and the
/// folder's flush). Once the journal passes ``foldingSize``, its entries are folded into the
/// settings file in one durable commit and it starts again, empty.
///
/// Opening reads the settings file, then applies the journal's entries in order; each entry sets
/// whole values, so an entry applied again (a fold that completed before the journal was
/// emptied) changes nothing.
///
/// The file: a 16-byte header, `VSJOURN1` and a random generation (8 bytes, little-endian) new
/// each time the journal starts again, then entries, each `VSJE`, the payload's length (4 bytes,
/// little-endian), the FNV-1a 64 digest of the generation and the payload (8 bytes,
/// little-endian), and the payload (JSON); an entry left in reused blocks from an earlier
/// generation does not read as one. Appends are serialized and each waits for its flush, so
/// after a crash only the last entry can be incomplete: a tail that is not a whole entry, with no
/// whole entry after it, is an append that never returned, and opening cuts it off, keeping its
/// bytes beside the journal (`sync.journal.cut-<UUID>`) unless they are all zeros. Anything else
/// that does not read (a broken entry with whole entries after it, another header) is
/// corruption: opening throws and touches nothing.
final class ReplicaJournal: Sendable {
    /// The journal's path.
    let path: String
    /// The size past which the journal is folded into the settings file.
    let foldingSize: Int

    static let magic = Array("VSJOURN1".utf8)
    static let headerSize = 16
    static let entryMark = Array("VSJE".utf8)
    static let entryHeaderSize = 16
    /// The permission bits of a journal this makes.
    let permissions: mode_t

    /// The open file and what it holds since the last fold; guarded by the mutex, which is held
    /// across each read or append so the file and its length never disagree.
    private let state = Mutex(State())

    private struct State {
        var descriptor: Int32 = -1
        /// The end of the last whole entry.
        var length = 0
        /// The generation in the header; a new one when the journal starts again.
        var generation: UInt64 = 0
        /// Every entry since the last fold, merged.
        var unfolded = ReplicaFiles.Changes()
        /// Why the journal cannot be appended to, after a failed append that could not be undone.
        var broken: String?
    }

    init(path: String, foldingSize: Int, permissions: UInt16) {
        self.path = path
        self.foldingSize = foldingSize
        self.permissions = mode_t(permissions)
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 {
            close(descriptor)
        }
    }

    /// Opens the journal (made if absent), cuts off an incomplete last entry, and returns its
    /// entries merged in order (what a fold would write), off the caller's executor.
    @concurrent func open() async throws -> ReplicaFiles.Changes {
        try state.withLock { state in
            if state.descriptor >= 0 {
                close(state.descriptor)
                state = State()
            }
            let descriptor = try openOrCreate()
            let contents: [UInt8]
            let read: Read
            do {
                contents = try Self.readAll(descriptor)
                read = try Self.entries(in: contents, path: path)
            } catch {
                close(descriptor)
                throw error
            }
            state.descriptor = descriptor
            state.length = read.length
            state.generation = read.generation
            if read.length < contents.count {
                // An append that never returned: cut it off before anything follows it, its
                // bytes kept beside the journal.
                let tail = contents[read.length...]
                if tail.contains(where: { $0 != 0 }) {
                    try keep(tail)
                }
                guard ftruncate(descriptor, off_t(read.length)) == 0, Self.flush(descriptor) else {
                    state.broken = "its incomplete last entry could not be cut off (errno \(errno))"
                    throw failure("could not cut off its incomplete last entry")
                }
            }
            state.unfolded = read.changes
            return read.changes
        }
    }

    /// Appends `changes` as one entry and flushes it, off the caller's executor; returns whether
    /// the journal has grown past ``foldingSize``.
    @concurrent func append(_ changes: ReplicaFiles.Changes) async throws -> Bool {
        let payload: Data
        do {
            payload = try JSONEncoder().encode(changes)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: "sync journal '\(path)'", reason: "a commit does not encode as JSON",
                underlyingError: error)
        }
        return try state.withLock { state in
            if let broken = state.broken {
                throw failure("is unusable until the replica is opened again: \(broken)")
            }
            guard state.descriptor >= 0 else { throw failure("was appended to before it was opened") }
            let start = state.length
            var bytes: [UInt8] = []
            if start == 0 {
                state.generation = UInt64.random(in: 1...UInt64.max)
                bytes = Self.magic
                Self.appendLittleEndian(state.generation, to: &bytes)
            }
            bytes += Self.entryMark
            Self.appendLittleEndian(UInt32(payload.count), to: &bytes)
            Self.appendLittleEndian(Self.digest(of: payload, generation: state.generation), to: &bytes)
            bytes += payload
            guard Self.write(bytes, at: start, to: state.descriptor), Self.flush(state.descriptor) else {
                let code = errno
                // Undo the partial entry, so that the next append does not follow it.
                if ftruncate(state.descriptor, off_t(start)) != 0 || !Self.flush(state.descriptor) {
                    state.broken = "an append failed (errno \(code)) and could not be undone"
                }
                throw failure("could not be appended to (errno \(code))")
            }
            state.length = start + bytes.count
            state.unfolded.merge(changes)
            return state.length > foldingSize
        }
    }

    /// Everything the journal holds since the last fold, merged: what a fold commits.
    var unfolded: ReplicaFiles.Changes {
        state.withLock { $0.unfolded }
    }

    /// The journal's size: the end of its last whole entry.
    var length: Int {
        state.withLock { $0.length }
    }

    /// Empties the journal once its entries are folded into the settings file, off the caller's
    /// executor.
    @concurrent func empty() async throws {
        try state.withLock { state in
            guard state.broken == nil, state.descriptor >= 0 else { return }
            // Its entries are in the settings file: applied again, they change nothing.
            guard ftruncate(state.descriptor, 0) == 0 else {
                throw failure("could not be emptied after a fold (errno \(errno))")
            }
            state.length = 0
            state.unfolded = ReplicaFiles.Changes()
            guard Self.flush(state.descriptor) else {
                state.broken = "it was emptied after a fold, but not flushed (errno \(errno))"
                throw failure("could not be flushed after a fold (errno \(errno))")
            }
        }
    }

    /// Opens the journal's file, or makes it and flushes its folder, so that the file is there
    /// after a crash.
    private func openOrCreate() throws -> Int32 {
        let made = openFile(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC)
        if made >= 0 {
            let folder = openFile((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
            defer { if folder >= 0 { close(folder) } }
            guard folder >= 0, fsync(folder) == 0 else {
                close(made)
                throw failure("was made, but its folder could not be flushed (errno \(errno))")
            }
            return made
        }
        guard errno == EEXIST else { throw failure("could not be made (errno \(errno))") }
        let opened = openFile(path, O_RDWR | O_CLOEXEC)
        guard opened >= 0 else { throw failure("could not be opened (errno \(errno))") }
        return opened
    }

    /// Keeps the bytes an incomplete append left in a file of their own beside the journal.
    private func keep(_ tail: ArraySlice<UInt8>) throws {
        let kept = path + ".cut-" + UUID().uuidString
        let descriptor = openFile(kept, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("could not keep its incomplete last entry (errno \(errno))") }
        defer { close(descriptor) }
        guard Self.write(Array(tail), at: 0, to: descriptor), Self.flush(descriptor) else {
            throw failure("could not keep its incomplete last entry (errno \(errno))")
        }
    }

    /// Flushes the file at `path` and its folder, off the caller's executor: a fold makes the
    /// settings file durable this way before it empties the journal, whatever the file options.
    @concurrent func synchronize(_ path: String) async throws {
        for target in [path, (path as NSString).deletingLastPathComponent] {
            let descriptor = openFile(target, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure("could not open '\(target)' to flush it (errno \(errno))") }
            defer { close(descriptor) }
            guard Self.flush(descriptor, metadata: true) else {
                throw failure("could not flush '\(target)' (errno \(errno))")
            }
        }
    }

    private func failure(_ what: String) -> ValueStoreError {
        ValueStoreError(.io, store: "sync journal '\(path)'", reason: "the journal \(what)")
    }

    // MARK: Reading

    private struct Read {
        /// The whole entries, merged in order.
        var changes = ReplicaFiles.Changes()
        /// The end of the last whole entry.
        var length = 0
        var generation: UInt64 = 0
    }

    /// The whole entries of `contents`, merged, and where they end.
    private static func entries(in contents: [UInt8], path: String) throws -> Read {
        var read = Read()
        guard !contents.isEmpty else { return read }
        if contents.count < headerSize || Array(contents.prefix(magic.count)) != magic {
            // The first append, cut short: what is there of the magic is the magic or zeros, and
            // without a whole header no entry can be read.
            let isTorn = contents.prefix(magic.count).enumerated().allSatisfy { $1 == 0 || $1 == magic[$0] }
            if isTorn {
                return read
            }
            if Array(contents.prefix(magic.count - 1)) == Array(magic.prefix(magic.count - 1)) {
                throw ValueStoreError(
                    .newerVersion, store: "sync journal '\(path)'",
                    reason: "the journal's format is newer than this version reads")
            }
            throw corrupted(path, "has no journal header")
        }
        read.generation = littleEndian(contents[magic.count..<headerSize], as: UInt64.self)
        var offset = headerSize
        read.length = offset
        while offset < contents.count {
            guard let (payload, end) = entry(in: contents, at: offset, generation: read.generation) else {
                // Not a whole entry: an incomplete last append, unless a whole entry follows.
                if (offset + 1..<contents.count).contains(where: {
                    entry(in: contents, at: $0, generation: read.generation) != nil
                }) {
                    throw corrupted(path, "has a broken entry at byte \(offset), with whole entries after it")
                }
                return read
            }
            do {
                read.changes.merge(try JSONDecoder().decode(ReplicaFiles.Changes.self, from: Data(payload)))
            } catch {
                throw ValueStoreError(
                    .decodingFailed, store: "sync journal '\(path)'",
                    reason: "the entry at byte \(offset) is whole but is not a commit this version reads",
                    underlyingError: error)
            }
            offset = end
            read.length = end
        }
        return read
    }

    /// The payload of a whole entry at `offset`, and where the entry ends; `nil` when the bytes
    /// there are not one.
    private static func entry(
        in contents: [UInt8],
        at offset: Int,
        generation: UInt64
    ) -> (ArraySlice<UInt8>, Int)? {
        guard contents.count - offset >= entryHeaderSize,
            contents[offset..<offset + 4].elementsEqual(entryMark)
        else { return nil }
        let length = Int(littleEndian(contents[offset + 4..<offset + 8], as: UInt32.self))
        let end = offset + entryHeaderSize + length
        guard end <= contents.count else { return nil }
        let payload = contents[offset + entryHeaderSize..<end]
        guard
            digest(of: payload, generation: generation)
                == littleEndian(contents[offset + 8..<offset + 16], as: UInt64.self)
        else { return nil }
        return (payload, end)
    }

    /// An entry's digest: FNV-1a 64 of the journal's generation and the payload.
    private static func digest(of payload: some Sequence<UInt8>, generation: UInt64) -> UInt64 {
        var digest = FNV1a()
        withUnsafeBytes(of: generation.littleEndian) { digest.mix($0) }
        digest.mix(payload)
        return digest.value
    }

    private static func corrupted(_ path: String, _ what: String) -> ValueStoreError {
        ValueStoreError(.corrupted, store: "sync journal '\(path)'", reason: "the journal \(what)")
    }

    // MARK: System calls

    private func openFile(_ path: String, _ flags: Int32) -> Int32 {
        var descriptor: Int32
        repeat {
            descriptor = systemOpen(path, flags, permissions)
        } while descriptor < 0 && errno == EINTR
        return descriptor
    }

    private static func readAll(_ descriptor: Int32) throws -> [UInt8] {
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress, $0.count, off_t(contents.count))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw ValueStoreError(
                    .io, store: "sync journal", reason: "the journal could not be read (errno \(errno))")
            }
            if count == 0 { return contents }
            contents += buffer.prefix(count)
        }
    }

    private static func write(_ bytes: [UInt8], at offset: Int, to descriptor: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(offset + written))
            }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            written += count
        }
        return true
    }

    /// Flushes the file's data, and the size that reads it (all its metadata with `metadata`),
    /// to stable storage.
    private static func flush(_ descriptor: Int32, metadata: Bool = false) -> Bool {
        #if canImport(Darwin)
        // F_FULLFSYNC asks the drive to flush its cache too; some file systems refuse it.
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return true }
        while fsync(descriptor) != 0 {
            if errno != EINTR { return false }
        }
        #else
        while (metadata ? fsync(descriptor) : fdatasync(descriptor)) != 0 {
            if errno != EINTR { return false }
        }
        #endif
        return true
    }

    private static func appendLittleEndian<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func littleEndian<Integer: FixedWidthInteger>(
        _ bytes: ArraySlice<UInt8>,
        as type: Integer.Type
    ) -> Integer {
        bytes.reversed().reduce(Integer.zero) { ($0 << 8) | Integer($1) }
    }
}

private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
