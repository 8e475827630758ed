public import Foundation
import Synchronization

/// Many small settings in one durable property-list file, each key its own typed store.
///
/// ```swift
/// let settings = SettingsFile(directory.appending(path: "settings.plist"))
/// let theme = settings.store("theme", as: String.self)
/// try await theme.save("dark")
/// try await settings.batch { batch in
///     try batch.set("dark", for: "theme")
///     try batch.set(16, for: "fontSize")
///     batch.remove("legacyFlag")
/// }
/// ```
///
/// - **Every key obeys the store laws.** A missing key throws ``ValueStoreError/notFound``; a key
///   whose value does not decode as the requested type throws
///   ``ValueStoreError/Code/decodingFailed`` for that key only.
/// - **A damaged file loses nothing.** A file that does not parse makes every key throw
///   ``ValueStoreError/Code/corrupted`` and refuses every write, and its bytes stay as they are.
/// - **Unknown keys are kept.** Keys written by a newer version of the app or another target keep
///   their exact values and types across every save.
/// - **Durable group commit.** Every awaited save, remove or batch returns after a durable write
///   that contains it (temporary file, `fsync`, rename, directory `fsync`). Writes that arrive
///   while a commit is in flight join the next one, so many concurrent writers cost about two
///   commits, and there is no timer.
/// - **Atomic updates.** `update` on a key store holds the file's locks, in this process and
///   across processes, for its read-modify-write. A batch is atomic as a whole.
/// - **Reads from memory.** Each key store keeps its decoded value until this process commits a
///   change to the file.
///
/// The format is an XML property list whose top level is a dictionary from key to value; see the
/// Settings guide.
public final class SettingsFile: Sendable {
    let file: DurableFile
    private let state = Locked(State())
    /// Counts changes to ``State/entries``, so key stores can tell whether their value is current
    /// with one atomic load.
    let generation = Atomic<UInt64>(0)
    /// Whether the file changed while its directory was not watched (see SettingsFile+Watch.swift).
    @usableFromInline let freshness: FileFreshness

    /// The generation of the entries this process knows now.
    @usableFromInline
    var currentGeneration: UInt64 { generation.load(ordering: .acquiring) }

    private struct State {
        /// The file's entries as last read or committed; `nil` until read.
        var entries: [String: PropertyListNode]?
        var pending: [PendingWrite] = []
        var isCommitting = false
        /// Follows the file's changes by other stores and processes, from the first use on.
        var watch: Task<Void, Never>?
    }

    /// This file's number as a writer, so its watch skips the signals of its own commits, which
    /// update the entries themselves (see ``ChangeOrigin``).
    private let writer = ChangeOrigin.next()

    /// Signals the key stores' streams after each change to the entries, once they are current.
    let keyChanges = ChangeBroadcaster()

    /// Changes waiting for the next commit, and the caller waiting for it.
    private struct PendingWrite {
        let changes: [(key: String, node: PropertyListNode?)]
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Creates a settings file at `url`; nothing is read or written until a key is used.
    ///
    /// ```swift
    /// let settings = SettingsFile(directory.appending(path: "settings.plist"))
    /// ```
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - options: Durability and permissions, as for ``ValueStore/file(_:options:)``.
    public init(_ url: URL, options: FileOptions = .default) {
        file = DurableFile(url, options: options, fileSystem: .live)
        freshness = FileFreshness(path: file.path, directory: file.directory)
    }

    /// A settings file over the given file system, for tests that count or fail system calls.
    init(_ url: URL, options: FileOptions, fileSystem: FileSystem) {
        file = DurableFile(url, options: options, fileSystem: fileSystem)
        freshness = FileFreshness(path: file.path, directory: file.directory)
    }

    deinit {
        state.withLock { $0.watch?.cancel() }
    }

    /// What errors name: "settings file '/path/settings.plist'".
    var label: String { "settings \(file.label)" }

    /// How errors name one key.
    @usableFromInline
    func label(of key: String) -> String { "key '\(key)' in \(label)" }
}

// MARK: - Reading

extension SettingsFile {
    /// The file's entries and the generation they belong to, from memory when read before.
    @usableFromInline
    func entries() async throws -> (entries: [String: PropertyListNode], generation: UInt64) {
        if let known = state.withLock({ state in state.entries.map { ($0, generation.load(ordering: .acquiring)) } }) {
            return known
        }
        startWatching()
        watchAgainIfTheDirectoryWasMissing()
        let before = generation.load(ordering: .acquiring)
        let entries = try await readEntriesConcurrently()
        // Without a watch of the directory (it does not exist yet), nothing would say when
        // another process writes: the entries are read again on every load until there is one.
        guard isWatchingTheDirectory else {
            return (entries, before)
        }
        // Kept only if nothing changed during the read: a change signalled meanwhile may be
        // newer than what was read.
        return (entries, replaceEntries(with: entries, ifGeneration: before) ?? before)
    }

    /// Starts following the file's changes, once: a change made by another store over the file
    /// or by another process makes the entries be read again.
    func startWatching() {
        state.withLock { state in
            guard state.watch == nil else { return }
            let changes = ChangeOrigin.$writer.withValue(writer) { file.changeSignals() }
            state.watch = Task { [weak self] in
                for await _ in changes {
                    guard let self else { return }
                    replaceEntries(with: nil)
                    // Never this file's own write, whatever writer started the watch: tell every
                    // key stream, a cache's included.
                    keyChanges.signalAll()
                }
            }
        }
    }

    /// Reads and parses the file off the caller's executor.
    @concurrent private func readEntriesConcurrently() async throws -> [String: PropertyListNode] {
        try readEntries()
    }

    /// Reads and parses the file: no file is no entries; bytes that are not a property-list
    /// dictionary are ``ValueStoreError/Code/corrupted``.
    func readEntries() throws -> [String: PropertyListNode] {
        guard let data = try file.read() else { return [:] }
        do {
            try Data.requireContent(data, format: "a property list")
            guard case .dictionary(let entries) = try PropertyListNode.parse(data) else {
                throw ValueStoreError(.corrupted, reason: "the property list's top level is not a dictionary")
            }
            return entries
        } catch let error as ValueStoreError {
            throw error.naming(label)
        } catch {
            throw ValueStoreError(
                .corrupted, store: label, reason: "the file is not a valid property list; nothing was changed",
                underlyingError: error)
        }
    }

    /// Whether the file's directory is watched, so that other processes' changes reach the
    /// watch: not while the directory is missing, nor where inotify is unavailable.
    private var isWatchingTheDirectory: Bool {
        FileChanges.shared.watcher(of: file.directory) != nil
    }

    /// Restarts the watch if its directory is not watched (it was missing as the watch started),
    /// so that other processes' changes are seen once a commit has created it.
    private func watchAgainIfTheDirectoryWasMissing() {
        guard !isWatchingTheDirectory else { return }
        let stale = state.withLock { state -> Task<Void, Never>? in
            defer { state.watch = nil }
            return state.watch
        }
        stale?.cancel()
        startWatching()
    }

    /// Makes `entries` the known contents (`nil`: unknown, read the file next time), unless they
    /// changed since `expected`; returns the new generation, or `nil` when nothing was replaced.
    @discardableResult
    func replaceEntries(
        with entries: [String: PropertyListNode]?,
        ifGeneration expected: UInt64? = nil
    ) -> UInt64? {
        state.withLock { state in
            if let expected, generation.load(ordering: .acquiring) != expected {
                return nil
            }
            state.entries = entries
            return generation.add(1, ordering: .releasing).newValue
        }
    }
}

// MARK: - Writing

extension SettingsFile {
    /// Applies `changes` (a `nil` node removes its key) in the next group commit and returns once
    /// that commit is durable.
    @usableFromInline
    func write(_ changes: [(key: String, node: PropertyListNode?)]) async throws {
        if let open = Self.openTransaction, open.file == ObjectIdentifier(self) {
            // Joins the transaction this task has open on the file; it commits with it.
            open.entries.withLock { entries in
                for change in changes {
                    entries[change.key] = change.node
                }
            }
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let leads = state.withLock { state in
                state.pending.append(PendingWrite(changes: changes, continuation: continuation))
                guard !state.isCommitting else { return false }
                state.isCommitting = true
                return true
            }
            if leads {
                // The commits block, so they run on the global executor; the callers wait. They
                // run as this file's writer, so its own watch skips their signals.
                ChangeOrigin.$writer.withValue(writer) {
                    Task { await self.commitPendingWrites() }
                }
            }
        }
    }

    /// Commits the waiting writes, all at once, until none are left; writes that arrive during a
    /// commit form the next one.
    private func commitPendingWrites() async {
        while true {
            let writes = state.withLock { state -> [PendingWrite] in
                let writes = state.pending
                state.pending = []
                if writes.isEmpty {
                    state.isCommitting = false
                }
                return writes
            }
            if writes.isEmpty {
                return
            }
            do {
                try await commit(writes.flatMap(\.changes))
                for write in writes {
                    write.continuation.resume()
                }
            } catch {
                for write in writes {
                    write.continuation.resume(throwing: error)
                }
            }
        }
    }

    /// One durable commit under the file's locks: reads the file as it is now, applies the
    /// changes in order, and writes the result if it differs.
    private func commit(_ changes: [(key: String, node: PropertyListNode?)]) async throws {
        try await transaction { entries in
            for change in changes {
                entries[change.key] = change.node
            }
        }
    }

    /// Runs `body` on the file's current entries under its locks, in this process and across
    /// processes, then writes the entries durably if `body` changed them. Nothing is written
    /// when the file is damaged or `body` throws.
    @usableFromInline
    func transaction<Result>(
        _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result
    ) async throws -> Result {
        if let open = Self.openTransaction, open.file == ObjectIdentifier(self) {
            // Inside this file's own transaction, on this task (an update's body that writes
            // another key, a move between two keys): join it, rather than wait for its lock.
            return try await open.run(body)
        }
        startWatching()
        do {
            return try await ChangeOrigin.$writer.withValue(writer) {
                try await file.exclusively { _ in
                    let current = try await readEntriesConcurrently()
                    let open = OpenTransaction(file: ObjectIdentifier(self), entries: current)
                    let result = try await Self.$openTransaction.withValue(open) {
                        try await open.run(body)
                    }
                    let entries = open.entries.withLock { $0 }
                    if entries != current {
                        try await storeConcurrently(entries)
                    }
                    replaceEntries(with: entries)
                    if entries != current {
                        keyChanges.signal()
                    }
                    watchAgainIfTheDirectoryWasMissing()
                    return result
                }
            }
        } catch {
            // The file may have changed in ways this process does not know; read it again.
            replaceEntries(with: nil)
            throw error
        }
    }

    /// The transaction this task has open on a settings file, if any.
    @TaskLocal static var openTransaction: OpenTransaction?

    /// A transaction in progress: the entries it will commit, which writes from inside it, on the
    /// same task and the same file, change too.
    final class OpenTransaction: Sendable {
        let file: ObjectIdentifier
        /// Only the task that opened the transaction reads and writes them.
        let entries: Locked<[String: PropertyListNode]>

        init(file: ObjectIdentifier, entries: [String: PropertyListNode]) {
            self.file = file
            self.entries = Locked(entries)
        }

        /// Runs `body` on a copy of the entries and, if it returns, applies the keys it changed;
        /// writes made from inside it, to other keys, stay.
        func run<Result>(
            _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result
        ) async throws -> Result {
            let before = self.entries.withLock { $0 }
            var after = before
            let result = try await body(&after)
            self.entries.withLock { [after] entries in
                for (key, node) in after where before[key] != node {
                    entries[key] = node
                }
                for key in before.keys where after[key] == nil {
                    entries[key] = nil
                }
            }
            return result
        }
    }

    /// Encodes and writes the entries, off the caller's executor.
    @concurrent private func storeConcurrently(_ entries: [String: PropertyListNode]) async throws {
        let data: Data
        do {
            data = try PropertyListSerialization.data(
                fromPropertyList: entries.mapValues(\.object), format: .xml, options: 0)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: label, reason: "the settings could not be written as a property list",
                underlyingError: error)
        }
        try file.write(data)
    }
}
