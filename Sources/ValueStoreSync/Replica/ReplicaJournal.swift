import Foundation
import Synchronization
import ValueStore

/// The replica's write-ahead journal, `sync.journal` beside its settings file: every commit is
/// one entry appended to it and flushed (`fdatasync`; `F_FULLFSYNC` on Apple platforms), which
/// costs a fraction of rewriting the settings file (a new file, its flush, a rename and the
/// folder's flush). Once the journal passes ``foldingSize``, its entries are folded into the
/// settings file in one durable commit and it starts again, empty but for a header of a new
/// generation.
///
/// Opening reads the settings file, then applies the journal's entries in order; each entry sets
/// whole values, so an entry applied again (a fold that completed before the journal was
/// emptied) changes nothing.
///
/// The file: a 16-byte header, `VSJOURN1` and a random generation (8 bytes, little-endian) new
/// each time the journal starts again, then entries, each `VSJE`, the payload's length (4 bytes,
/// little-endian), the FNV-1a 64 digest of the generation and the payload (8 bytes,
/// little-endian), and the payload (JSON); an entry left in reused blocks from an earlier
/// generation does not read as one. Appends are serialized and each waits for its flush, or
/// is the only one not flushed (the last), so after a crash only the last entry can be
/// incomplete or missing: a tail that is not a whole entry, with no
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
    /// The system calls the journal makes: ``FileSystem/live``, or a test's, which fails some.
    let fileSystem: FileSystem

    /// The open file and what it holds since the last fold; guarded by the mutex, which is held
    /// across each read or append so the file and its length never disagree.
    private let state = Mutex(State())

    private struct State {
        var descriptor: Int32 = -1
        /// The end of the last whole entry.
        var length = 0
        /// The end of what is known flushed; only the last entry may be past it.
        var flushed = 0
        /// The generation in the header; a new one when the journal starts again.
        var generation: UInt64 = 0
        /// Every entry since the last fold, merged.
        var unfolded = ReplicaFiles.Changes()
        /// Why the journal cannot be appended to, after a failed append that could not be undone.
        var broken: String?
        /// Whether the folder may only be read: the journal is read, never appended to.
        var isReadOnly = false
        /// Whether the next ``catchUp()`` reads the journal whole and reports a fold: the
        /// replica could not take in the news the last one reported (``readAgain()``).
        var readsAgain = false
    }

    init(path: String, foldingSize: Int, permissions: UInt16, fileSystem: FileSystem = .live) {
        self.path = path
        self.foldingSize = foldingSize
        self.permissions = mode_t(permissions)
        self.fileSystem = fileSystem
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 {
            closeAfterUse(descriptor)
        }
    }

    /// Opens the journal (made if absent), cuts off an incomplete last entry, and returns its
    /// entries merged in order (what a fold would write), off the caller's executor. In a folder
    /// this process may only read, the journal is read and left as it is, and appends throw.
    @concurrent func open() async throws -> ReplicaFiles.Changes {
        try state.withLock { state in
            if state.descriptor >= 0 {
                closeAfterUse(state.descriptor)
                state = State()
            }
            let (descriptor, isWritable) = try openOrCreate()
            let contents: [UInt8]
            let read: Read
            do {
                contents = descriptor >= 0 ? try readAll(descriptor) : []
                read = try Self.entries(in: contents, path: path)
            } catch {
                if descriptor >= 0 { closeAfterUse(descriptor) }
                throw error
            }
            state.descriptor = descriptor
            state.length = read.length
            state.generation = read.generation
            state.isReadOnly = !isWritable
            try cutIncompleteEntry(of: contents, at: read.length, in: &state)
            state.unfolded = read.changes
            return read.changes
        }
    }

    /// Cuts off what follows the last whole entry, at `end`: an append that never returned (this
    /// process's, or another's that was killed), cut before anything follows it, its bytes kept
    /// beside the journal. A journal this process may only read is left as it is.
    private func cutIncompleteEntry(of contents: [UInt8], at end: Int, in state: inout State) throws {
        guard end < contents.count, !state.isReadOnly else { return }
        let tail = contents[end...]
        if tail.contains(where: { $0 != 0 }) {
            try keep(tail)
        }
        do {
            try cut(state.descriptor, at: end)
        } catch {
            state.broken = "its incomplete last entry could not be cut off (errno \(Self.code(of: error)))"
            throw failure("could not cut off its incomplete last entry")
        }
    }

    /// What other processes did to the journal since this one last read or wrote it.
    enum News {
        /// Nothing.
        case none
        /// They appended entries: these, merged.
        case appended(ReplicaFiles.Changes)
        /// They folded it into the settings file, which must be read again, and may have
        /// appended since: the journal's entries now, merged.
        case folded(ReplicaFiles.Changes)
    }

    /// Reads what other processes committed to the journal since this one last read or wrote it,
    /// off the caller's executor; call holding the folder's lock (``ReplicaFolderLock``). An
    /// incomplete last entry, left by a process killed as it appended, is cut off.
    @concurrent func catchUp() async throws -> News {
        try state.withLock { state in
            guard state.descriptor >= 0, state.broken == nil else { return .none }
            let size: Int
            do {
                size = try fileSystem.status(state.descriptor).size
            } catch {
                throw failure("could not be examined (errno \(Self.code(of: error)))")
            }
            let unchanged = size == state.length && (state.length == 0 || header(state.descriptor) == state.generation)
            if unchanged && !state.readsAgain {
                return .none
            }
            let contents = try readAll(state.descriptor)
            // What was read is recorded only once nothing can fail: news that throws is read
            // again by the next call.
            if !state.readsAgain && state.length > 0 && contents.count >= state.length
                && header(of: contents) == state.generation
            {
                let read = try Self.entries(in: contents, path: path, from: state.length)
                try cutIncompleteEntry(of: contents, at: read.length, in: &state)
                state.unfolded.merge(read.changes)
                (state.length, state.generation) = (read.length, read.generation)
                return .appended(read.changes)
            }
            let read = try Self.entries(in: contents, path: path)
            try cutIncompleteEntry(of: contents, at: read.length, in: &state)
            state.unfolded = read.changes
            state.flushed = 0  // whatever the others appended since their fold may not be
            (state.length, state.generation) = (read.length, read.generation)
            state.readsAgain = false
            return .folded(read.changes)
        }
    }

    /// Writes the header of `generation` at the start of the file open at `descriptor`.
    private func writeHeader(_ generation: UInt64, to descriptor: Int32) throws {
        var header = Self.magic
        Self.appendLittleEndian(generation, to: &header)
        try header.withUnsafeBytes { try fileSystem.writeAll(descriptor, $0, at: 0) }
    }

    /// Makes the next ``catchUp()`` read the whole journal and report a fold: the replica could
    /// not take in the fold the last one reported (the settings file did not read), and must
    /// read the settings file again, though the journal may not change before it does.
    func readAgain() {
        state.withLock { $0.readsAgain = true }
    }

    /// The generation in the header of the file open at `descriptor`; `nil` without a whole one,
    /// or when it cannot be read (the caller then reads the whole journal, which reports why).
    private func header(_ descriptor: Int32) -> UInt64? {
        var bytes = [UInt8](repeating: 0, count: Self.headerSize)
        let count = bytes.withUnsafeMutableBytes { buffer in
            Result { try fileSystem.readAt(descriptor, buffer, 0) }
        }
        return (try? count.get()) == Self.headerSize ? header(of: bytes) : nil
    }

    /// The generation in the header at the start of `contents`; `nil` without a whole one.
    private func header(of contents: [UInt8]) -> UInt64? {
        guard contents.count >= Self.headerSize, contents.starts(with: Self.magic) else { return nil }
        return Self.littleEndian(contents[Self.magic.count..<Self.headerSize], as: UInt64.self)
    }

    /// Whether another process may have changed the journal since this one last read or wrote
    /// it: its size or generation differs. A hint, read without the folder's lock, on this
    /// thread; ``catchUp()`` reads what changed.
    var mayHaveNews: Bool {
        state.withLock { state in
            guard state.descriptor >= 0, state.broken == nil else { return false }
            // A journal that cannot be examined may have news: catchUp() reports why.
            guard let size = try? fileSystem.status(state.descriptor).size else { return true }
            return state.readsAgain || size != state.length
                || (state.length > 0 && header(state.descriptor) != state.generation)
        }
    }

    /// The journal's entries merged in order, read on this thread from a descriptor of its own,
    /// which changes nothing: an incomplete last entry is left as it is, and no journal reads as
    /// none.
    func read() throws -> ReplicaFiles.Changes {
        let descriptor: Int32
        do {
            descriptor = try fileSystem.open(path, O_RDONLY | O_CLOEXEC, permissions)
        } catch let error as FileSystemError where error.isNotFound {
            return ReplicaFiles.Changes()
        } catch {
            throw failure("could not be opened to read (errno \(Self.code(of: error)))")
        }
        defer { closeAfterUse(descriptor) }
        return try Self.entries(in: readAll(descriptor), path: path).changes
    }

    /// Appends `changes` as one entry and flushes it (unless not `flushing`, and every entry
    /// before it is flushed: at most the last entry is ever unflushed, so that a crash cannot
    /// keep a later entry and lose an earlier one), off the caller's executor; returns whether
    /// the journal has grown past ``foldingSize``.
    @concurrent func append(_ changes: ReplicaFiles.Changes, flushing: Bool = true) async throws -> Bool {
        let payload: Data
        do {
            payload = try JSONEncoder().encode(changes)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: "sync journal '\(path)'", reason: "a commit does not encode as JSON",
                underlyingError: error)
        }
        return try state.withLock { state in
            if state.isReadOnly {
                throw failure("cannot be written: the replica's folder is read-only to this process, which can read it")
            }
            if let broken = state.broken {
                throw failure("is unusable until the replica is opened again: \(broken)")
            }
            guard state.descriptor >= 0 else { throw failure("was appended to before it was opened") }
            let size: Int
            do {
                size = try fileSystem.status(state.descriptor).size
            } catch {
                throw failure("could not be examined; nothing was written (errno \(Self.code(of: error)))")
            }
            guard size == state.length else {
                // Another process appended, and this one did not read it first: appending at its
                // own idea of the end would overwrite it.
                throw failure("changed since this process read it; nothing was written")
            }
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
            let flushing = flushing || state.flushed < start
            do {
                try bytes.withUnsafeBytes { try fileSystem.writeAll(state.descriptor, $0, at: Int64(start)) }
                if flushing { try fileSystem.synchronizeData(state.descriptor) }
            } catch {
                let code = Self.code(of: error)
                // Undo the partial entry, so that the next append does not follow it.
                do {
                    try cut(state.descriptor, at: start)
                } catch {
                    state.broken = "an append failed (errno \(code)) and could not be undone"
                }
                throw failure("could not be appended to (errno \(code))")
            }
            state.length = start + bytes.count
            state.flushed = flushing ? state.length : state.flushed
            state.unfolded.merge(changes)
            return state.length > foldingSize
        }
    }

    /// Flushes the last entry, if it was appended without its flush, off the caller's executor;
    /// call holding the replica's write lock. The flush runs outside the journal's lock, so that
    /// a read of its news does not wait for the disk.
    @concurrent func flush() async throws {
        let unflushed = state.withLock { state in
            state.flushed < state.length && state.broken == nil ? (state.descriptor, state.length) : nil
        }
        guard let (descriptor, end) = unflushed else { return }
        var code: Int32?
        do { try fileSystem.synchronizeData(descriptor) } catch { code = Self.code(of: error) }
        try state.withLock { state in
            if let code {
                // Its entry may be shown already, and not be on the disk: nothing follows it.
                state.broken = "an entry could not be flushed (errno \(code))"
                throw failure("could not be flushed (errno \(code))")
            }
            state.flushed = max(state.flushed, min(end, state.length))
        }
    }

    /// The end of what is known flushed: a crash may take back what follows it (at most the
    /// last entry).
    var flushedLength: Int {
        state.withLock { $0.flushed }
    }

    /// Everything the journal holds since the last fold, merged: what a fold commits.
    var unfolded: ReplicaFiles.Changes {
        state.withLock { $0.unfolded }
    }

    /// Whether the folder may only be read, as the journal was opened.
    var isReadOnly: Bool {
        state.withLock { $0.isReadOnly }
    }

    /// The journal's size: the end of its last whole entry.
    var length: Int {
        state.withLock { $0.length }
    }

    /// Empties the journal once its entries are folded into the settings file, off the caller's
    /// executor: it starts again as a header of a new generation, written before the entries are
    /// cut off, so every process that read it before, even empty (emptied to nothing, it would
    /// keep the size that process knew), sees the fold. A crash in between leaves entries of the
    /// old generation after the new header, an incomplete tail; the settings file holds them.
    @concurrent func empty() async throws {
        try state.withLock { state in
            guard state.broken == nil, !state.isReadOnly, state.descriptor >= 0 else { return }
            let generation = UInt64.random(in: 1...UInt64.max)
            do {
                try writeHeader(generation, to: state.descriptor)
                try fileSystem.truncate(state.descriptor, Int64(Self.headerSize))
            } catch {
                // The header may be new and the entries still there: with the old header put
                // back, the journal is as it was and the next commit folds again; otherwise an
                // append would follow them under a generation the header no longer names.
                let code = Self.code(of: error)
                if (try? writeHeader(state.generation, to: state.descriptor)) == nil {
                    state.broken = "it could not be emptied after a fold (errno \(code))"
                }
                throw failure("could not be emptied after a fold (errno \(code))")
            }
            state.length = Self.headerSize
            state.generation = generation
            state.flushed = 0
            state.unfolded = ReplicaFiles.Changes()
            do {
                try fileSystem.synchronizeData(state.descriptor)
            } catch {
                let code = Self.code(of: error)
                state.broken = "it was emptied after a fold, but not flushed (errno \(code))"
                throw failure("could not be flushed after a fold (errno \(code))")
            }
            state.flushed = state.length
        }
    }

    /// Flushes the file at `path` and its folder, off the caller's executor: a fold makes the
    /// settings file durable this way before it empties the journal, whatever the file options.
    @concurrent func synchronize(_ path: String) async throws {
        for target in [path, (path as NSString).deletingLastPathComponent] {
            let descriptor: Int32
            do {
                descriptor = try fileSystem.open(target, O_RDONLY | O_CLOEXEC, 0)
            } catch {
                throw failure("could not open '\(target)' to flush it (errno \(Self.code(of: error)))")
            }
            defer { closeAfterUse(descriptor) }
            do {
                try fileSystem.synchronize(descriptor)
            } catch {
                throw failure("could not flush '\(target)' (errno \(Self.code(of: error)))")
            }
        }
    }

    func failure(_ what: String) -> ValueStoreError {
        ValueStoreError(.io, store: "sync journal '\(path)'", reason: "the journal \(what)")
    }
}
