import Foundation
import Synchronization

extension SettingsFile {
    /// The file's entries and the generation they belong to, from memory when read before.
    @usableFromInline
    func entries() async throws -> (entries: Entries, generation: UInt64) {
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

    /// The keys the file holds now, each byte for byte as stored; from memory when read before.
    ///
    /// `package`: a sync replica (`ValueStoreSync`) keeps one entry per synced key and lists
    /// them when it pushes, rather than keep an index of its own beside the file's.
    package func keys() async throws -> [String] {
        try await entries().entries.keys.map(\.name)
    }

    /// The file's entries as it holds them now, each a string, read and parsed on this thread,
    /// past any entries in memory; an entry that is not a string throws.
    ///
    /// `package`: a sync replica (`ValueStoreSync`) keeps every entry as JSON text, and reads its
    /// folder this way where it cannot wait (its first status), where it may only read (a
    /// read-only folder), and after another process folded its journal into the file.
    package func stringsNow() throws -> [String: String] {
        var strings: [String: String] = [:]
        for (key, node) in try readEntries() {
            guard case .string(let text) = node else {
                throw ValueStoreError(
                    .decodingFailed, store: label(of: key.name), reason: "the entry is not a string")
            }
            strings[key.name] = text
        }
        return strings
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
        let entries: Entries
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
    func keyBroadcaster(for key: PropertyListKey) -> ChangeBroadcaster {
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
    private func signalKeys(changedFrom old: Signalled, to new: Entries) {
        keyChanges.withLock { broadcasters in
            for (key, broadcaster) in broadcasters {
                if case .entries(let old) = old, old[key] == new[key] {
                    continue
                }
                broadcaster.signalAll()
            }
        }
    }

    /// Reads and parses the file on the I/O threads (see ``BlockingIO``), off the caller's
    /// executor.
    func readContentsConcurrently() async throws -> Contents {
        try await BlockingIO.run { try await readAndParse() }
    }

    /// Reads and parses the file, off the caller's executor: on the I/O threads when called
    /// through ``readContentsConcurrently()``.
    @concurrent private func readAndParse() async throws -> Contents {
        let data = try file.read()
        return Contents(data: data, entries: try parse(data))
    }

    /// Parses bytes read from the file off the caller's executor.
    @concurrent func parseConcurrently(_ data: Data?) async throws -> Contents {
        Contents(data: data, entries: try parse(data))
    }

    /// Reads and parses the file: no file is no entries; bytes that are not a property-list
    /// dictionary are ``ValueStoreError/Code/corrupted``.
    func readEntries() throws -> Entries {
        try parse(file.read())
    }

    /// Parses the file's bytes (`nil`: no file, no entries): the binary and the XML format with
    /// this library's own readers, which keep every key byte for byte and a UID as it is; an
    /// old-style (OpenStep) property list with Foundation's, when it is plain ASCII, so that no
    /// two of its keys can differ only in Unicode normalization.
    func parse(_ data: Data?) throws -> Entries {
        guard let data else { return [:] }
        do {
            try Data.requireContent(data, format: "a property list")
            if BinaryPropertyList.isBinary(data) {
                return try BinaryPropertyList.dictionary(from: data)
            }
            if XMLPropertyList.isXML(data) {
                return try XMLPropertyList.dictionary(from: data)
            }
            guard case .dictionary(let entries) = try PropertyListNode.parse(data) else {
                throw ValueStoreError(.corrupted, reason: "the property list's top level is not a dictionary")
            }
            guard !data.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "\\") }) else {
                throw ValueStoreError(
                    .unsupportedFormat,
                    reason: "the file is an old-style property list with text beyond ASCII, whose keys this library "
                        + "cannot read exactly; convert it (plutil -convert binary1) to use it; nothing was changed")
            }
            return Entries(uniqueKeysWithValues: entries.map { (PropertyListKey($0.key), $0.value) })
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
        file.fileSystem.changes.watcher(of: file.directory) != nil
    }

    /// Restarts the watch if its directory is not watched (it was missing as the watch started,
    /// or the watch was lost), so that other processes' changes are seen once a commit has
    /// created it. A restart while the registry counts the directory's watch as lost is reported
    /// as a ``ValueStoreEvent/Kind/settingsWatchRestarted`` event, once per loss.
    func watchAgainIfTheDirectoryWasMissing() {
        guard !isWatchingTheDirectory else { return }
        let trouble = file.fileSystem.changes.trouble(of: file.directory)
        let (stale, report) = state.withLock { state -> (Task<Void, Never>?, Bool) in
            defer { state.watch = nil }
            let report = trouble != nil && trouble != state.reportedTrouble
            if report {
                state.reportedTrouble = trouble
            }
            return (state.watch, report)
        }
        stale?.cancel()
        startWatching()
        if report {
            ValueStoreEvent.report(
                ValueStoreEvent(
                    .settingsWatchRestarted, source: label, directory: file.directory,
                    message: "its directory's watch was lost; following the file again, and reading it on "
                        + "every load until the directory is watched"))
        }
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
