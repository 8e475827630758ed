import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The change signals of every file path in this process: writes by any store over the path,
/// and, through one ``DirectoryWatcher`` per directory, writes by other processes.
///
/// - Writers call ``willReplace(_:with:)`` or ``willRemove(_:)`` just before they rename or
///   unlink, recording what the file will be, then ``didChange(_:)`` after: every stream for the
///   path gets a signal at once.
/// - The watcher reports every change to a name it sees; a change whose result is what this
///   process last wrote is its own, already signalled, and is skipped.
/// - A directory is watched while at least one stream for a file in it is alive.
///
/// While nobody observes a path, a write costs one dictionary look-up under a lock.
final class FileChanges: Sendable {
    static let shared = FileChanges()

    private struct Path {
        let broadcaster = ChangeBroadcaster()
        var streams = 0
        /// What this process's last write left at the path; `nil` before it writes.
        var ownWrite: FileIdentity?
    }

    private struct Directory {
        let watcher: DirectoryWatcher?
        var streams = 0
    }

    private struct State {
        var paths: [String: Path] = [:]
        var directories: [String: Directory] = [:]
    }

    private let state = Locked(State())

    /// A stream of signals for the file at `path`, in `directory`, until its consumer stops.
    func signals(path: String, directory: String) -> AsyncStream<Void> {
        let broadcaster = state.withLock { state in
            state.paths[path, default: Path()].streams += 1
            // A directory missing when the first stream started had no watch; each new stream
            // tries again, so one created since is watched from then on.
            if state.directories[directory]?.watcher == nil {
                // Creating the watch makes a few non-blocking system calls (inotify_init1,
                // inotify_add_watch, pipe) and starts the thread that reads it.
                let watcher = DirectoryWatcher(directory: directory) { [weak self] name in
                    self?.externalChange(in: directory, name: name)
                }
                if let existing = state.directories[directory] {
                    if watcher != nil {
                        state.directories[directory] = Directory(watcher: watcher, streams: existing.streams)
                    }
                } else {
                    state.directories[directory] = Directory(watcher: watcher)
                }
            }
            state.directories[directory]!.streams += 1
            return state.paths[path]!.broadcaster
        }
        return broadcaster.signals { [weak self] in
            self?.release(path: path, directory: directory)
        }
    }

    /// A stream of signals for the file at `url`.
    func signals(forFileAt url: URL) -> AsyncStream<Void> {
        DurableFile(url, options: .default, fileSystem: .live).changeSignals()
    }

    private func release(path: String, directory: String) {
        let stopped: DirectoryWatcher? = state.withLock { state in
            state.paths[path]!.streams -= 1
            if state.paths[path]!.streams == 0 {
                state.paths[path] = nil
            }
            state.directories[directory]!.streams -= 1
            guard state.directories[directory]!.streams == 0 else { return nil }
            return state.directories.removeValue(forKey: directory)!.watcher
        }
        stopped?.stop()
    }

    /// The watcher of `directory`, while any stream needs it; `nil` when none could be made.
    func watcher(of directory: String) -> DirectoryWatcher? {
        state.withLock { $0.directories[directory]?.watcher }
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
    func didChange(_ path: String) {
        let broadcaster = state.withLock { $0.paths[path]?.broadcaster }
        broadcaster?.signal()
    }

    private func record(_ path: String, _ identity: () -> FileIdentity) {
        guard state.withLock({ $0.paths[path] != nil }) else { return }
        let identity = identity()
        state.withLock { $0.paths[path]?.ownWrite = identity }
    }

    /// The watcher saw `name` change in `directory` (`nil`: some entry): signal each path that
    /// changed, unless this process wrote what is there now.
    private func externalChange(in directory: String, name: String?) {
        let prefix = directory == "/" ? "/" : "\(directory)/"
        let watched = state.withLock { state in
            state.paths.compactMap { path, entry in
                let inDirectory = name.map { path == prefix + $0 } ?? isEntry(path, of: prefix)
                return inDirectory ? (path, entry.broadcaster, entry.ownWrite) : nil
            }
        }
        for (path, broadcaster, ownWrite) in watched {
            if let ownWrite, ownWrite == FileIdentity(of: path) {
                continue
            }
            broadcaster.signalAll()
        }
    }

    private func isEntry(_ path: String, of prefix: String) -> Bool {
        path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/")
    }
}

/// What is at a path: which file (device and inode), its size and modification time, or nothing.
///
/// A save renames a new file over the old one, so each save leaves a new inode; an edit in place
/// changes the size or the time.
enum FileIdentity: Equatable, Sendable {
    case absent
    case file(device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int)
    /// `stat` failed for another reason: never equal to a recorded write.
    case unknown(Int32)

    init(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            self = code == ENOENT ? .absent : .unknown(code)
            return
        }
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        self = .file(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
            size: Int64(truncatingIfNeeded: info.st_size),
            seconds: Int(time.tv_sec), nanoseconds: Int(time.tv_nsec))
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.absent, .absent): true
        case (.file(let a, let b, let c, let d, let e), .file(let f, let g, let h, let i, let j)):
            a == f && b == g && c == h && d == i && e == j
        default: false
        }
    }
}
