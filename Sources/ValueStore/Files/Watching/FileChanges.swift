import Foundation
import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The change signals of every file path of one ``FileSystem`` in this process: writes by any
/// store over the path, and, through one ``DirectoryWatch`` per directory, writes by other
/// processes. ``shared`` is the live file system's; a test's fake watches get a registry of their
/// own (``FileSystem/watching(with:)``).
///
/// - Writers call ``willReplace(_:with:)`` or ``willRemove(_:)`` just before they rename or
///   unlink, recording what the file will be, then ``didChange(_:)`` after: every stream for the
///   path gets a signal at once.
/// - The watcher reports every change to a name it sees; a change whose result is what this
///   process last wrote is its own, already signalled, and is skipped.
/// - A directory is watched while at least one stream for a file in it is alive.
///
/// Every observed directory has a health (``Watch``): watched, waiting for a missing directory to
/// appear (its nearest existing ancestor is watched for it), or not watched at all (no inotify
/// watch could be made, no permission). A lost watch (the directory deleted or moved away) is
/// armed again at once; a directory that appears is watched from then on.
///
/// A watch follows a directory's inode, the path does not: an ancestor renamed and made again, a
/// symlink on the way pointed elsewhere, a file system mounted over it. So the path is followed
/// by looking: while any stream is alive, a tick every ``retryInterval`` (and each new stream,
/// for its directory) compares the directory the path names now, its device and inode, with the
/// one watched, and arms the watch again where they differ. The same tick tries again every
/// directory that is not watched, so an observer that never writes recovers on its own; a
/// released watch tries them at once. Nothing else retries: a check before a cached load makes
/// one `stat` and no system call of the watch's.
///
/// Whenever a directory becomes watched again, is replaced, or its watcher's queue overflowed,
/// every observed file in it is signalled, since changes may have gone unseen.
///
/// An operator hears of a watch lost, one that cannot be made and one restored through
/// ``ValueStoreEvent`` (once per trouble, not once per retry), reported after the lock is
/// released.
///
/// While nobody observes a path, a write costs one dictionary look-up under a lock.
final class FileChanges: Sendable {
    /// Starts watching a directory: its entries, or for ``DirectoryEvent/Interest/creation`` the
    /// creation of entries. Each batch of events goes to `onEvents`, on the watch's own thread;
    /// `nil` when the directory cannot be watched (it does not exist, no inotify instance left).
    typealias WatchDirectory =
        @Sendable (
            _ directory: String, _ interest: DirectoryEvent.Interest,
            _ onEvents: @escaping @Sendable (_ events: [DirectoryEvent]) -> Void
        ) -> (any DirectoryWatch)?

    /// The live file system's registry, watching with ``DirectoryWatcher``.
    static let shared = FileChanges { directory, interest, onEvents in
        DirectoryWatcher(directory: directory, interest: interest, onEvents: onEvents)
    }

    private let watchDirectory: WatchDirectory

    /// How often, while any stream is alive, the observed directories' paths are compared with
    /// what is watched and the unwatched ones are tried again.
    let retryInterval: Duration

    init(retryInterval: Duration = .seconds(2), watchDirectory: @escaping WatchDirectory) {
        self.watchDirectory = watchDirectory
        self.retryInterval = retryInterval
    }

    private struct Path {
        let broadcaster = ChangeBroadcaster()
        let directory: String
        var streams = 0
        /// What this process's last write left at the path; `nil` before it writes.
        var ownWrite: FileIdentity?
    }

    /// How an observed directory is watched.
    private enum Watch {
        /// Every change to its entries arrives, while the path names `identity`, the directory
        /// watched.
        case watching(any DirectoryWatch, identity: FileIdentity)
        /// The directory does not exist: `watcher` watches its nearest existing ancestor for the
        /// creation of `component`, the next name on the way to it.
        case waiting(for: String, watcher: any DirectoryWatch)
        /// No watch could be made: only this process's writes are seen.
        case unwatched

        var watcher: (any DirectoryWatch)? {
            switch self {
            case .watching(let watcher, _), .waiting(_, let watcher): watcher
            case .unwatched: nil
            }
        }

        var isWatching: Bool {
            if case .watching = self { true } else { false }
        }

        /// Whether the watch must be armed again while the path names `current`: nothing is
        /// watched, the path names another directory than the one watched, or the missing
        /// directory exists.
        func isStale(naming current: FileIdentity) -> Bool {
            switch self {
            case .unwatched: true
            case .watching(_, let identity): !identity.isSameFile(as: current)
            case .waiting: if case .file = current { true } else { false }
            }
        }
    }

    private struct Directory {
        var watch: Watch
        /// The number of the current watch: events from a watcher replaced since are ignored.
        var id: UInt64
        var streams = 0
        /// Set while an event said the directory is not watched, so its recovery is reported too:
        /// a number that differs for each such episode.
        var trouble: UInt64?
    }

    private struct State {
        var paths: [String: Path] = [:]
        var directories: [String: Directory] = [:]
        var nextID: UInt64 = 0
        /// Whether the ticks that follow the paths run: from the first stream to the last.
        var ticking = false
        /// Events recorded under the lock, reported once it is released.
        var events: [ValueStoreEvent] = []
    }

    private let state = Locked(State())

    /// Runs `body` under the lock, then reports the events it recorded, outside the lock.
    private func changingState<Result>(_ body: (inout State) -> sending Result) -> Result {
        let (result, events) = state.withLock { state -> (Result, [ValueStoreEvent]) in
            let result = body(&state)
            defer { state.events.removeAll() }
            return (result, state.events)
        }
        for event in events {
            ValueStoreEvent.report(event)
        }
        return result
    }

    /// How many observed directories are not watched, in every registry: zero on the healthy
    /// path, where a cache needs no check before answering from memory.
    static let unwatchedDirectories = Atomic<Int>(0)

    /// How many times an observed directory stopped being watched, in any registry, so that a
    /// check made before is not trusted after (see ``FileFreshness``).
    static let losses = Atomic<UInt64>(0)

    /// A stream of signals for the file at `path`, in `directory`, until its consumer stops.
    func signals(path: String, directory: String) -> AsyncStream<Void> {
        FileFreshness.recording?.depend(on: path, in: directory, changes: self)
        // What the path names now, to compare with a watch made before.
        let current = FileIdentity(of: directory)
        let (broadcaster, replaced, rearmed, startTicks) = changingState { state in
            state.paths[path, default: Path(directory: directory)].streams += 1
            var replaced: (any DirectoryWatch)?
            var rearmed = false
            if let entry = state.directories[directory] {
                if entry.watch.isStale(naming: current) {
                    let watched: Bool
                    (replaced, watched) = rearm(directory, &state)
                    rearmed = watched || entry.watch.isWatching
                }
            } else {
                // Creating the watch makes a few non-blocking system calls (inotify_add_watch,
                // stat; the process's first also inotify_init1 and starts the thread reading it).
                let id = nextID(&state)
                state.directories[directory] = Directory(
                    watch: arm(directory, id: id), id: id)
                updateHealth(from: nil, to: state.directories[directory]!.watch)
                noteChange(of: directory, from: nil, &state)
            }
            state.directories[directory]!.streams += 1
            let startTicks = !state.ticking
            state.ticking = true
            return (state.paths[path]!.broadcaster, replaced, rearmed, startTicks)
        }
        replaced?.stop()
        if rearmed {
            externalChange([.anyEntry], in: directory)
        }
        if startTicks {
            startTicking()
        }
        return broadcaster.signals { [weak self] in
            self?.release(path: path, directory: directory)
        }
    }

    private func release(path: String, directory: String) {
        let stopped: (any DirectoryWatch)? = state.withLock { state in
            state.paths[path]!.streams -= 1
            if state.paths[path]!.streams == 0 {
                state.paths[path] = nil
            }
            state.directories[directory]!.streams -= 1
            guard state.directories[directory]!.streams == 0 else { return nil }
            let watch = state.directories.removeValue(forKey: directory)!.watch
            updateHealth(from: watch, to: nil)
            return watch.watcher
        }
        guard let stopped else { return }
        stopped.stop()
        // What it held (an inotify watch) may be what another directory lacked.
        if Self.unwatchedDirectories.load(ordering: .acquiring) > 0 {
            check(onlyUnwatched: true)
        }
    }

    /// The watcher of `directory`, while any stream needs it and it is watched; `nil` when the
    /// directory is missing or no watch could be made.
    func watcher(of directory: String) -> (any DirectoryWatch)? {
        state.withLock { state in
            guard case .watching(let watcher, _) = state.directories[directory]?.watch else { return nil }
            return watcher
        }
    }

    /// Whether `directory` is watched, or observed by no stream (nothing to miss).
    func isWatched(_ directory: String) -> Bool {
        state.withLock { $0.directories[directory]?.watch.isWatching ?? true }
    }

    /// Whether `directory` is observed and no watch could be made for it, nor for its ancestor.
    func isUnwatched(_ directory: String) -> Bool {
        state.withLock { state in
            if case .unwatched = state.directories[directory]?.watch { true } else { false }
        }
    }

    /// Whether any stream follows `path`; tests use it to check that streams are released.
    func isObserved(_ path: String) -> Bool {
        state.withLock { $0.paths[path] != nil }
    }

    /// Records that this process is about to rename `temporary` over `path`.
    func willReplace(_ path: String, with temporary: String) {
        record(path) { FileIdentity(of: temporary) }
    }

    /// Records that this process is about to delete `path`, or move it aside.
    func willRemove(_ path: String) {
        record(path) { .absent }
    }

    /// Signals every stream for `path` except the current writer's: this process changed it.
    ///
    /// A write into a directory that is not watched (the first save, which created it) tries to
    /// watch it again, so that other processes' changes are seen from then on.
    func didChange(_ path: String) {
        let (broadcaster, directory) = state.withLock { state -> (ChangeBroadcaster?, String?) in
            guard let entry = state.paths[path] else { return (nil, nil) }
            let watched = state.directories[entry.directory]?.watch.isWatching ?? true
            return (entry.broadcaster, watched ? nil : entry.directory)
        }
        broadcaster?.signal()
        if let directory {
            rearmNow(directory)
        }
    }

    private func record(_ path: String, _ identity: () -> FileIdentity) {
        guard state.withLock({ $0.paths[path] != nil }) else { return }
        let identity = identity()
        state.withLock { $0.paths[path]?.ownWrite = identity }
    }

    // MARK: - Following the paths

    /// Checks the paths every ``retryInterval`` from now while any stream is alive, on a task of
    /// its own; the ticks end with the last stream.
    private func startTicking() {
        let interval = retryInterval
        Task.detached(priority: .utility) { [weak self] in
            repeat {
                // Never cancelled: the ticks end when no directory is observed.
                try? await Task.sleep(for: interval)
            } while self?.check(onlyUnwatched: false) ?? false
        }
    }

    /// Arms again every observed directory whose watch is stale: not watched, or, unless
    /// `onlyUnwatched`, watching a directory the path no longer names (or waiting for one it
    /// names now). Returns whether any directory is observed; when none is, the ticks end.
    @discardableResult
    func check(onlyUnwatched: Bool) -> Bool {
        let observed = state.withLock { state -> [(directory: String, id: UInt64, watch: Watch)]? in
            guard !state.directories.isEmpty else {
                if !onlyUnwatched { state.ticking = false }
                return nil
            }
            return state.directories.map { ($0.key, $0.value.id, $0.value.watch) }
        }
        guard let observed else { return false }
        for (directory, id, watch) in observed {
            let stale =
                if case .unwatched = watch { true } else {
                    !onlyUnwatched && watch.isStale(naming: FileIdentity(of: directory))
                }
            guard stale else { continue }
            let (replaced, signal) = changingState { state -> ((any DirectoryWatch)?, Bool) in
                guard let entry = state.directories[directory], entry.id == id else { return (nil, false) }
                let (replaced, watched) = rearm(directory, &state)
                return (replaced, watched || entry.watch.isWatching)
            }
            replaced?.stop()
            if signal {
                externalChange([.anyEntry], in: directory)
            }
        }
        return true
    }

    // MARK: - Arming

    private func nextID(_ state: inout State) -> UInt64 {
        state.nextID += 1
        return state.nextID
    }

    /// A watch for `directory`: of the directory itself, or, while it is missing, of its nearest
    /// existing ancestor, for the next component on the way; `.unwatched` when neither can be made.
    private func arm(_ directory: String, id: UInt64) -> Watch {
        // A directory or component created while its watch was being made: try again (once for
        // the directory itself, which may exist and still not be watchable).
        var triedExisting = false
        for _ in 0..<4 {
            let before = FileIdentity(of: directory)
            if let watcher = makeWatcher(of: directory, for: directory, interest: .entries, id: id) {
                // The watch follows the inode the path named while it was made: the same before
                // and after, or the directory was replaced meanwhile.
                let after = FileIdentity(of: directory)
                if before.isSameFile(as: after) {
                    return .watching(watcher, identity: after)
                }
                watcher.stop()
                continue
            }
            if Self.exists(directory) {
                if triedExisting { return .unwatched }
                triedExisting = true
                continue
            }
            var missing = directory
            var ancestor = Self.parent(of: directory)
            while ancestor != missing, !Self.exists(ancestor) {
                missing = ancestor
                ancestor = Self.parent(of: ancestor)
            }
            guard ancestor != missing else { return .unwatched }
            guard let watcher = makeWatcher(of: ancestor, for: directory, interest: .creation, id: id)
            else {
                if Self.exists(ancestor) { return .unwatched }
                continue
            }
            if Self.exists(missing) {
                watcher.stop()
                continue
            }
            return .waiting(for: String(missing.dropFirst(ancestor == "/" ? 1 : ancestor.count + 1)), watcher: watcher)
        }
        return .unwatched
    }

    /// Replaces the watch of `directory` with a new one; returns the watcher it replaced, to stop
    /// outside the lock, and whether the directory is watched now.
    private func rearm(_ directory: String, _ state: inout State) -> (replaced: (any DirectoryWatch)?, watched: Bool) {
        guard let old = state.directories[directory] else { return (nil, false) }
        let id = nextID(&state)
        let watch = arm(directory, id: id)
        state.directories[directory]!.watch = watch
        state.directories[directory]!.id = id
        updateHealth(from: old.watch, to: watch)
        noteChange(of: directory, from: old.watch, &state)
        return (old.watch.watcher, watch.isWatching)
    }

    /// Records the event an operator should hear of now that `directory`'s watch, which was
    /// `old` (`nil`: none yet), is what the state holds: lost, not possible, or back after one
    /// of those. A retry that changes nothing reports nothing.
    private func noteChange(of directory: String, from old: Watch?, _ state: inout State) {
        guard let entry = state.directories[directory] else { return }
        let new = entry.watch
        let event: ValueStoreEvent?
        switch (old, new) {
        case (_, .unwatched):
            event =
                entry.trouble != nil
                ? nil
                : ValueStoreEvent(
                    .watchUnavailable, severity: .warning, source: "directory '\(directory)'", directory: directory,
                    message: "no watch can be made (no inotify watch left, or no permission): only this "
                        + "process's writes are seen there; trying again every \(retryInterval)")
        case (.watching?, .waiting):
            event = ValueStoreEvent(
                .watchLost, source: "directory '\(directory)'", directory: directory,
                message: "the directory was deleted or moved away; waiting for it to appear, then every "
                    + "observed file in it is reloaded")
        case (.watching(_, let before)?, .watching(_, let after)) where !before.isSameFile(as: after):
            event = ValueStoreEvent(
                .watchLost, source: "directory '\(directory)'", directory: directory,
                message: "the path names another directory now (replaced, or a link on the way changed); "
                    + "watching it, and every observed file in it is reloaded")
        case (_, .watching) where entry.trouble != nil:
            event = ValueStoreEvent(
                .watchRestored, source: "directory '\(directory)'", directory: directory,
                message: "watched again; every observed file in it is reloaded")
        default:
            event = nil
        }
        guard let event else { return }
        state.events.append(event)
        if event.kind == .watchRestored {
            state.directories[directory]!.trouble = nil
        } else if entry.trouble == nil {
            state.directories[directory]!.trouble = nextID(&state)
        }
    }

    /// A number for the current loss of `directory`'s watch, the same until it is watched again,
    /// or `nil` while it is watched, was never lost, or is observed by no stream.
    func trouble(of directory: String) -> UInt64? {
        state.withLock { $0.directories[directory]?.trouble }
    }

    /// Arms `directory` again and, once it is watched, signals every file in it.
    private func rearmNow(_ directory: String) {
        let (replaced, watched) = changingState { state -> ((any DirectoryWatch)?, Bool) in
            guard let entry = state.directories[directory], !entry.watch.isWatching else { return (nil, false) }
            return rearm(directory, &state)
        }
        replaced?.stop()
        if watched {
            externalChange([.anyEntry], in: directory)
        }
    }

    private func makeWatcher(
        of watched: String, for directory: String, interest: DirectoryEvent.Interest, id: UInt64
    ) -> (any DirectoryWatch)? {
        watchDirectory(watched, interest) { [weak self] events in
            self?.receive(events, in: directory, from: id)
        }
    }

    /// Keeps ``unwatchedDirectories`` and ``losses`` current as a directory's watch changes.
    private func updateHealth(from old: Watch?, to new: Watch?) {
        let wasWatching = old?.isWatching ?? true
        let isWatching = new?.isWatching ?? true
        if wasWatching && !isWatching {
            Self.unwatchedDirectories.add(1, ordering: .releasing)
            if old != nil {
                Self.losses.add(1, ordering: .releasing)
            }
        } else if !wasWatching && isWatching {
            Self.unwatchedDirectories.subtract(1, ordering: .releasing)
        }
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    // MARK: - Events

    /// What a watcher of `directory` (or of its ancestor, while it is missing) reported.
    private func receive(_ events: [DirectoryEvent], in directory: String, from id: UInt64) {
        let (replaced, changes) = changingState { state -> ((any DirectoryWatch)?, [DirectoryEvent]) in
            guard let entry = state.directories[directory], entry.id == id else { return (nil, []) }
            switch entry.watch {
            case .watching:
                guard events.contains(.lost) else { return (nil, events) }
                // Deleted, or moved away: watch what is at the path now, or wait for it.
                let (replaced, _) = rearm(directory, &state)
                return (replaced, [.anyEntry])
            case .waiting(let component, _):
                let arrived = events.contains { event in
                    switch event {
                    case .entry(let name, _): name == component
                    case .anyEntry, .lost: true
                    }
                }
                guard arrived else { return (nil, []) }
                let (replaced, watched) = rearm(directory, &state)
                return (replaced, watched ? [.anyEntry] : [])
            case .unwatched:
                return (nil, [])
            }
        }
        replaced?.stop()
        if !changes.isEmpty {
            externalChange(changes, in: directory)
        }
    }

    /// The watcher saw `events` in `directory`: signal each path that changed, unless this
    /// process wrote what is there now.
    private func externalChange(_ events: [DirectoryEvent], in directory: String) {
        let prefix = directory == "/" ? "/" : "\(directory)/"
        var everything = false
        var named: [String: Bool] = [:]
        for event in events {
            switch event {
            case .entry(let name, let writtenInPlace):
                named[prefix + name] = named[prefix + name] == true || writtenInPlace
            case .anyEntry, .lost: everything = true
            }
        }
        let watched = state.withLock { state in
            state.paths.compactMap { path, entry -> (ChangeBroadcaster, FileIdentity?, String, Bool)? in
                if let writtenInPlace = named[path] {
                    return (entry.broadcaster, entry.ownWrite, path, writtenInPlace)
                }
                guard everything, isEntry(path, of: prefix) else { return nil }
                return (entry.broadcaster, entry.ownWrite, path, false)
            }
        }
        for (broadcaster, ownWrite, path, writtenInPlace) in watched {
            // This library's saves rename a new file over the path and never write it in place:
            // a write in place is another writer's, whatever the identity says.
            if !writtenInPlace, let ownWrite, ownWrite == FileIdentity(of: path) {
                continue
            }
            broadcaster.signalAll()
        }
    }

    private func isEntry(_ path: String, of prefix: String) -> Bool {
        path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/")
    }
}
