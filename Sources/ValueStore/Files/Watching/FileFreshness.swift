import Synchronization

/// Whether a value held in memory may be older than the files it was read from, for the caches
/// that answer loads from memory: ``ValueStore/cached()`` and the key stores of a
/// ``SettingsFile``.
///
/// While every directory of its files is watched, a change to a file arrives as a signal and the
/// cache empties itself: ``needsCheck`` is `false` after one atomic load, and nothing else is
/// paid. While one is not (missing, lost, no inotify watch left), a load calls ``hasChanged()``
/// before answering from memory: one `stat` per file, compared with what the last check saw (the
/// file, its size, its modification and its change time: see ``FileIdentity/observe(_:)``). It
/// does not try to watch the directory again: ``FileChanges`` does, on its own tick.
@usableFromInline
final class FileFreshness: Sendable {
    private struct File: Equatable {
        let path: String
        let directory: String
        /// The registry that follows the file: its file system's.
        let changes: FileChanges

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.path == rhs.path && lhs.directory == rhs.directory && lhs.changes === rhs.changes
        }
    }

    private struct State {
        var files: [File] = []
        /// What the last check saw, and the number of lost watches then (see ``FileChanges/losses``).
        var seen: (losses: UInt64, files: [Seen])?
    }

    /// What one `stat` of a file saw: its identity and its inode's change time, so that a write
    /// in place that puts size and modification time back is still a change.
    private struct Seen: Equatable {
        let identity: FileIdentity
        let changed: Duration?
    }

    private let state = Locked(State())

    /// Bound while a cache starts following its base store: each file path the base asks
    /// ``FileChanges`` to follow becomes one of this freshness's files.
    @TaskLocal static var recording: FileFreshness?

    /// A freshness whose files are recorded as its cache starts following its base store.
    @usableFromInline
    init() {}

    /// A freshness of one file, which `changes` follows.
    init(path: String, directory: String, changes: FileChanges) {
        depend(on: path, in: directory, changes: changes)
    }

    /// Adds a file the cached value is read from, which `changes` follows.
    func depend(on path: String, in directory: String, changes: FileChanges) {
        let file = File(path: path, directory: directory, changes: changes)
        state.withLock { state in
            if !state.files.contains(file) {
                state.files.append(file)
            }
        }
    }

    /// Whether a load must call ``hasChanged()`` before answering from memory: some file's
    /// directory is not watched. One atomic load while every observed directory is watched.
    @usableFromInline
    var needsCheck: Bool {
        guard FileChanges.unwatchedDirectories.load(ordering: .acquiring) > 0 else { return false }
        let files = state.withLock { $0.files }
        return files.contains { !$0.changes.isWatched($0.directory) }
    }

    /// Whether any file changed since the last check; `true` at the first check, and after a
    /// watch was lost since. Runs off the caller's executor, as a brief read (see
    /// ``BlockingIO/runBrief(_:)``): it makes one `stat` per file, and nothing else.
    @usableFromInline
    func hasChanged() async -> Bool {
        await BlockingIO.runBrief { await observeChanges() }
    }

    @concurrent private func observeChanges() async -> Bool {
        let files = state.withLock { $0.files }
        let losses = FileChanges.losses.load(ordering: .acquiring)
        let observed = files.map { file in
            let (identity, changed) = FileIdentity.observe(file.path)
            return Seen(identity: identity, changed: changed)
        }
        return state.withLock { state in
            defer { state.seen = (losses, observed) }
            guard let seen = state.seen, seen.losses == losses else { return true }
            return seen.files != observed
        }
    }
}
