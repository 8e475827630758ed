import Foundation
import Synchronization

/// The change signals of every file path of one ``FileSystem`` in this process: writes by any
/// store over the path, and, through one ``DirectoryWatch`` per directory, writes by other
/// processes. ``shared`` is the live file system's; a test's fake watches get a registry of their
/// own (``FileSystem/watching(with:)``).
///
/// - Writers call ``willReplace(_:with:)`` or ``willRemove(_:)`` just before they rename or
///   unlink, recording what the file will be, then ``didChange(_:)`` after: every stream for the
///   path gets a signal at once.
/// - The watcher reports every change to a name it sees (FileChanges+Events.swift); a change
///   whose result is what this process last wrote is its own, already signalled, and is skipped.
/// - A directory is watched while at least one stream for a file in it is alive.
/// - A symbolic link at an observed path is followed: its streams get the changes of the file it
///   names too, and move with the link when it is pointed elsewhere (FileChanges+Links.swift).
///
/// Every observed directory has a health (``Watch``, FileChanges+Health.swift): watched, waiting
/// for a missing directory to appear (its nearest existing ancestor is watched for it), or not
/// watched at all (no inotify watch could be made, no permission). A lost watch (the directory deleted or moved away) is
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

    let watchDirectory: WatchDirectory

    /// How often, while any stream is alive, the observed directories' paths are compared with
    /// what is watched and the unwatched ones are tried again.
    let retryInterval: Duration

    init(retryInterval: Duration = .seconds(2), watchDirectory: @escaping WatchDirectory) {
        self.watchDirectory = watchDirectory
        self.retryInterval = retryInterval
    }

    struct Path {
        let broadcaster = ChangeBroadcaster()
        let directory: String
        var streams = 0
        /// What this process's last write left at the path; `nil` before it writes.
        var ownWrite: FileIdentity?
        /// The file the symbolic link at the path names, whose changes its streams get too (see
        /// FileChanges+Links.swift); `nil` while the path is no link, or before it was looked at.
        var follows: Followed?
        /// The links whose streams get this file's changes.
        var followers: [String] = []
    }

    /// A file followed for a link's streams, counted as one stream of its own.
    struct Followed: Equatable {
        let path: String
        let directory: String
    }

    struct Directory {
        var watch: Watch
        /// The number of the current watch: events from a watcher replaced since are ignored.
        var id: UInt64
        var streams = 0
        /// Set while an event said the directory is not watched, so its recovery is reported too:
        /// a number that differs for each such episode.
        var trouble: UInt64?
    }

    struct State {
        var paths: [String: Path] = [:]
        var directories: [String: Directory] = [:]
        var nextID: UInt64 = 0
        /// Whether the ticks that follow the paths run: from the first stream to the last.
        var ticking = false
        /// Events recorded under the lock, reported once it is released.
        var events: [ValueStoreEvent] = []
    }

    let state = Locked(State())

    /// Runs `body` under the lock, then reports the events it recorded, outside the lock.
    func changingState<Result>(_ body: (inout State) -> sending Result) -> Result {
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

    /// A stream of signals for the file at `path`, in `directory`, until its consumer stops.
    func signals(path: String, directory: String) -> AsyncStream<Void> {
        FileFreshness.recording?.depend(on: path, in: directory, changes: self)
        // What the path names now, to compare with a watch made before.
        let current = FileIdentity(of: directory)
        let added = changingState { state in
            register(path: path, directory: directory, naming: current, &state)
        }
        started(added, in: directory)
        return added.broadcaster.signals { [weak self] in
            self?.release(path: path, directory: directory)
        }
    }

    /// What ``register(path:directory:naming:_:)`` did, to finish outside the lock.
    struct Registration {
        let broadcaster: ChangeBroadcaster
        let replaced: (any DirectoryWatch)?
        let rearmed: Bool
        let startTicks: Bool
    }

    /// Counts one more stream for `path`, and for its directory, watching the directory if it is
    /// new or its watch is stale while the path names `current`.
    func register(path: String, directory: String, naming current: FileIdentity, _ state: inout State)
        -> Registration
    {
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
            state.directories[directory] = Directory(watch: arm(directory, id: id), id: id)
            updateHealth(from: nil, to: state.directories[directory]!.watch)
            noteChange(of: directory, from: nil, &state)
        }
        state.directories[directory]!.streams += 1
        let startTicks = !state.ticking
        state.ticking = true
        return Registration(
            broadcaster: state.paths[path]!.broadcaster, replaced: replaced, rearmed: rearmed, startTicks: startTicks)
    }

    /// Finishes a registration outside the lock.
    func started(_ registration: Registration, in directory: String) {
        registration.replaced?.stop()
        if registration.rearmed {
            externalChange([.anyEntry], in: directory)
        }
        if registration.startTicks {
            startTicking()
        }
    }

    private func release(path: String, directory: String) {
        released(changingState { unregister(path: path, directory: directory, &$0) })
    }

    /// Counts one stream less for `path` and its directory, and for the file it follows when it
    /// goes; returns the watchers no stream needs any more, to stop outside the lock.
    func unregister(path: String, directory: String, _ state: inout State) -> [any DirectoryWatch] {
        var stopped: [any DirectoryWatch] = []
        state.paths[path]!.streams -= 1
        if state.paths[path]!.streams == 0 {
            let entry = state.paths.removeValue(forKey: path)!
            if let followed = entry.follows {
                state.paths[followed.path]?.followers.removeAll { $0 == path }
                stopped += unregister(path: followed.path, directory: followed.directory, &state)
            }
        }
        state.directories[directory]!.streams -= 1
        guard state.directories[directory]!.streams == 0 else { return stopped }
        let watch = state.directories.removeValue(forKey: directory)!.watch
        updateHealth(from: watch, to: nil)
        return stopped + (watch.watcher.map { [$0] } ?? [])
    }

    /// Stops the watchers no stream needs any more.
    func released(_ stopped: [any DirectoryWatch]) {
        guard !stopped.isEmpty else { return }
        for watcher in stopped {
            watcher.stop()
        }
        // What they held (an inotify watch) may be what another directory lacked.
        if Self.unwatchedDirectories.load(ordering: .acquiring) > 0 {
            check(onlyUnwatched: true)
        }
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
        let (signalled, directory) = state.withLock { state -> ([ChangeBroadcaster], String?) in
            guard let entry = state.paths[path] else { return ([], nil) }
            let watched = state.directories[entry.directory]?.watch.isWatching ?? true
            return (broadcasters(of: path, state), watched ? nil : entry.directory)
        }
        for broadcaster in signalled {
            broadcaster.signal()
        }
        if let directory {
            rearmNow(directory)
        }
    }

    private func record(_ path: String, _ identity: () -> FileIdentity) {
        guard state.withLock({ $0.paths[path] != nil }) else { return }
        let identity = identity()
        state.withLock { $0.paths[path]?.ownWrite = identity }
    }
}
