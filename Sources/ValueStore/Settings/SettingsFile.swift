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
/// - **Atomic updates, with no lock held while user code runs.** `update` on a key store runs
///   its body on the entries, then commits under the file's locks, in this process and across
///   processes, if the file is still what the body started from; otherwise the body runs again.
///   A batch is atomic as a whole.
/// - **Reads from memory.** Each key store keeps its decoded value until this process commits a
///   change to the file.
///
/// The format is a binary property list whose top level is a dictionary from key to value, so
/// every value, a date's fractional seconds included, is kept exactly; XML property lists, which
/// earlier releases wrote, are read too. See the Settings guide.
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
        /// The bytes `entries` were read from or written as (`nil`: no file); a transaction's
        /// commit checks the file still holds them.
        var data: Data?
        var pending: [PendingWrite] = []
        var isCommitting = false
        /// Follows the file's changes by other stores and processes, from the first use on.
        var watch: Task<Void, Never>?
        /// The entries the key streams were last signalled for, so that only the keys whose entry
        /// changed are signalled.
        var signalled = Signalled.unknown
    }

    /// What the key streams last saw.
    private enum Signalled {
        /// Nothing was read yet.
        case unknown
        /// The file could not be read; every stream saw the failure.
        case failed
        case entries([String: PropertyListNode])

        /// Whether anything was read or failed yet.
        var isKnown: Bool {
            if case .unknown = self { false } else { true }
        }
    }

    /// This file's number as a writer, so its watch skips the signals of its own commits, which
    /// update the entries themselves (see ``ChangeOrigin``).
    private let writer = ChangeOrigin.next()

    /// Each observed key's broadcaster: it signals the key's streams after a change to that key's
    /// entry, once the entries are current.
    private let keyChanges = Locked<[String: ChangeBroadcaster]>([:])

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
        let contents = try await readContentsConcurrently()
        // Without a watch of the directory (it does not exist yet), nothing would say when
        // another process writes: the entries are read again on every load until there is one.
        guard isWatchingTheDirectory else {
            return (contents.entries, before)
        }
        // Kept only if nothing changed during the read: a change signalled meanwhile may be
        // newer than what was read.
        return (
            contents.entries,
            replaceEntries(with: contents, ifGeneration: before, signallingIfUnknown: false) ?? before
        )
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
                    await followChange()
                }
            }
        }
    }

    /// The file's bytes and the entries parsed from them: what a transaction starts from, and
    /// what its commit checks is still on disk.
    struct Contents: Sendable {
        /// `nil` when there is no file.
        let data: Data?
        let entries: [String: PropertyListNode]
    }

    /// Takes in a change another store or process made to the file (never this file's own
    /// commit): forgets the entries, so that no read racing with the change is kept, and when
    /// some key is observed, reads the file and signals the keys whose entry changed.
    private func followChange() async {
        replaceEntries(with: nil)
        guard keyChanges.withLock({ $0.values.contains { $0.subscriberCount > 0 } }) else { return }
        let before = generation.load(ordering: .acquiring)
        do {
            replaceEntries(with: try await readContentsConcurrently(), ifGeneration: before)
        } catch {
            // Every observed key loads again and shows the failure.
            state.withLock { state in
                state.signalled = .failed
                signalKeys(changedFrom: .failed, to: [:])
            }
        }
    }

    /// The broadcaster of `key`'s streams, made on first use.
    func keyBroadcaster(for key: String) -> ChangeBroadcaster {
        keyChanges.withLock { broadcasters in
            if let broadcaster = broadcasters[key] {
                return broadcaster
            }
            let broadcaster = ChangeBroadcaster()
            broadcasters[key] = broadcaster
            return broadcaster
        }
    }

    /// Signals the streams of each observed key whose entry differs between `old` and `new`;
    /// every observed key when `old` is not known entries.
    private func signalKeys(changedFrom old: Signalled, to new: [String: PropertyListNode]) {
        keyChanges.withLock { broadcasters in
            for (key, broadcaster) in broadcasters {
                if case .entries(let old) = old, old[key] == new[key] {
                    continue
                }
                broadcaster.signalAll()
            }
        }
    }

    /// Reads and parses the file off the caller's executor.
    @concurrent private func readContentsConcurrently() async throws -> Contents {
        let data = try file.read()
        return Contents(data: data, entries: try parse(data))
    }

    /// Parses bytes read from the file off the caller's executor.
    @concurrent private func parseConcurrently(_ data: Data?) async throws -> Contents {
        Contents(data: data, entries: try parse(data))
    }

    /// Reads and parses the file: no file is no entries; bytes that are not a property-list
    /// dictionary are ``ValueStoreError/Code/corrupted``.
    func readEntries() throws -> [String: PropertyListNode] {
        try parse(file.read())
    }

    /// Parses the file's bytes (`nil`: no file, no entries).
    private func parse(_ data: Data?) throws -> [String: PropertyListNode] {
        guard let data else { return [:] }
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

    /// Makes `contents` the known contents (`nil`: unknown, read the file next time), unless they
    /// changed since `expected`, and signals the streams of the keys whose entry changed since
    /// they were last signalled (all of them when that is not known, if `signallingIfUnknown`);
    /// returns the new generation, or `nil` when nothing was replaced.
    @discardableResult
    func replaceEntries(
        with contents: Contents?,
        ifGeneration expected: UInt64? = nil,
        signallingIfUnknown: Bool = true
    ) -> UInt64? {
        state.withLock { state in
            if let expected, generation.load(ordering: .acquiring) != expected {
                return nil
            }
            state.entries = contents?.entries
            state.data = contents?.data
            if let contents {
                if signallingIfUnknown || state.signalled.isKnown {
                    signalKeys(changedFrom: state.signalled, to: contents.entries)
                }
                state.signalled = .entries(contents.entries)
            }
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
        if let open = Self.openTransaction, open.path == file.path, open.join(changes, from: self) {
            // Joined the transaction this task has open on the file, through this object or
            // another over the same path; it commits with it. A task that outlived the
            // transaction (it inherits the task-local) commits on its own.
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
                // run as this file's writer, so its own watch skips their signals, and outside any
                // transaction the leading writer's task has open.
                ChangeOrigin.$writer.withValue(writer) {
                    Self.$openTransaction.withValue(nil) {
                        Task { await self.commitPendingWrites() }
                    }
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

    /// One durable group commit under the file's locks: reads the file as it is now, applies the
    /// changes in order, and writes the result if it differs. No code but this runs under them.
    private func commit(_ changes: [(key: String, node: PropertyListNode?)]) async throws {
        do {
            try await file.exclusively { _ in
                let current = try await readContentsConcurrently()
                var entries = current.entries
                for change in changes {
                    entries[change.key] = change.node
                }
                if entries != current.entries {
                    let written = try await storeConcurrently(entries)
                    replaceEntries(with: Contents(data: written, entries: entries))
                } else {
                    replaceEntries(with: current)
                }
                watchAgainIfTheDirectoryWasMissing()
            }
        } catch {
            // The file may have changed in ways this process does not know; read it again.
            replaceEntries(with: nil)
            throw error
        }
    }

    /// Runs `body` on the file's current entries, then writes them durably if `body` changed
    /// them, unless the file changed meanwhile: then `body` runs again on the new entries. Nothing
    /// is written when the file is damaged or `body` throws.
    ///
    /// No lock is held while `body` runs, in this process or across processes, since it may await
    /// anything: iOS terminates a suspended app that holds a file lock in an app-group container.
    /// The commit takes the locks, checks that the file still holds the bytes `body` started
    /// from, and writes; so a body that awaits a write to the same file never deadlocks.
    @usableFromInline
    func transaction<Result>(
        _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result
    ) async throws -> Result {
        if let open = Self.openTransaction, open.path == file.path,
            let result = try await open.run(body, from: self)
        {
            // Inside a transaction this task has open on the file (an update's body that updates
            // another key, a move between two keys): join it.
            return result
        }
        startWatching()
        var base = try await startingContents()
        while true {
            let open = OpenTransaction(path: file.path, entries: base.entries)
            // The body runs as its caller, not as this file's writer: a stream it starts must
            // hear this file's commits.
            let result: Result
            do {
                result = try await Self.$openTransaction.withValue(open) {
                    try await open.runAsOwner(body)
                }
            } catch {
                _ = open.close()
                throw error
            }
            let (entries, others) = open.close()
            if entries == base.entries {
                return result
            }
            switch try await commit(entries, ifUnchangedSince: base) {
            case .committed(let contents):
                // Other objects over the path whose writes joined know their commit at once.
                for other in others where other !== self {
                    other.replaceEntries(with: contents)
                }
                return result
            case .changed(let current):
                base = current
            }
        }
    }

    /// The entries a transaction starts from: from memory when known, else read without a lock.
    private func startingContents() async throws -> Contents {
        if let known = state.withLock({ state in state.entries.map { Contents(data: state.data, entries: $0) } }) {
            return known
        }
        return try await readContentsConcurrently()
    }

    private enum CommitOutcome {
        /// The entries were written (or were already on disk) and are now known.
        case committed(Contents)
        /// The file changed since the transaction read it: these are its contents now.
        case changed(Contents)
    }

    /// Writes `entries` under the file's locks if the file still holds `base`'s bytes.
    private func commit(
        _ entries: [String: PropertyListNode],
        ifUnchangedSince base: Contents
    ) async throws -> CommitOutcome {
        do {
            return try await ChangeOrigin.$writer.withValue(writer) {
                try await file.exclusively { _ in
                    let data = try await file.readConcurrently()
                    guard data == base.data else {
                        return .changed(try await parseConcurrently(data))
                    }
                    let written = try await storeConcurrently(entries)
                    let contents = Contents(data: written, entries: entries)
                    replaceEntries(with: contents)
                    watchAgainIfTheDirectoryWasMissing()
                    return .committed(contents)
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

    /// A transaction in progress: the entries it will commit, which writes from inside it to the
    /// same file (through any ``SettingsFile`` over its path) change too, until it closes.
    ///
    /// Tasks started inside an update inherit the task-local, and may outlive the transaction:
    /// a write that arrives after it closed must not join it, or it would be lost.
    final class OpenTransaction: Sendable {
        /// The file's path: writes through another object over the same file join too, rather
        /// than commit on their own and make the transaction run again.
        let path: String
        private let state: Locked<State>

        private struct State {
            var entries: [String: PropertyListNode]
            var isOpen = true
            /// The objects whose writes joined, which learn the entries once committed.
            var participants: [SettingsFile] = []
        }

        init(path: String, entries: [String: PropertyListNode]) {
            self.path = path
            state = Locked(State(entries: entries))
        }

        /// Applies `changes` if the transaction is still open; `false` when it closed.
        func join(_ changes: [(key: String, node: PropertyListNode?)], from file: SettingsFile) -> Bool {
            state.withLock { state in
                guard state.isOpen else { return false }
                for change in changes {
                    state.entries[change.key] = change.node
                }
                state.participants.append(file)
                return true
            }
        }

        /// Ends the transaction and returns the entries to commit and the objects that joined;
        /// later writes do not join.
        func close() -> (entries: [String: PropertyListNode], participants: [SettingsFile]) {
            state.withLock { state in
                state.isOpen = false
                return (state.entries, state.participants)
            }
        }

        /// Runs `body` on a copy of the entries and, if it returns while the transaction is still
        /// open, applies the keys it changed; `nil` when the transaction closed first, and then
        /// nothing was applied.
        func run<Result>(
            _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result,
            from file: SettingsFile? = nil
        ) async throws -> Result? {
            guard let before = state.withLock({ $0.isOpen ? $0.entries : nil }) else { return nil }
            var after = before
            let result = try await body(&after)
            let applied = state.withLock { [after] state in
                guard state.isOpen else { return false }
                for (key, node) in after where before[key] != node {
                    state.entries[key] = node
                }
                for key in before.keys where after[key] == nil {
                    state.entries[key] = nil
                }
                if let file {
                    state.participants.append(file)
                }
                return true
            }
            return applied ? result : nil
        }

        /// ``run(_:from:)`` by the task that opened the transaction, which closes it only
        /// afterwards.
        func runAsOwner<Result>(
            _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result
        ) async throws -> Result {
            guard let result = try await run(body) else {
                preconditionFailure("a transaction closed while its owner's body ran")
            }
            return result
        }
    }

    /// Encodes and writes the entries, off the caller's executor.
    @concurrent private func storeConcurrently(_ entries: [String: PropertyListNode]) async throws -> Data {
        let data: Data
        do {
            data = try PropertyListSerialization.data(
                fromPropertyList: entries.mapValues(\.object), format: .binary, options: 0)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: label, reason: "the settings could not be written as a property list",
                underlyingError: error)
        }
        try file.write(data)
        return data
    }
}
