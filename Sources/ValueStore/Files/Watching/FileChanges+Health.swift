import Foundation
import Synchronization

/// The health of every observed directory: how it is watched, whether any is not, and the ticks
/// that follow the paths and try the unwatched directories again.
extension FileChanges {
    /// How an observed directory is watched.
    enum Watch {
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
    /// How many observed directories are not watched, in every registry: zero on the healthy
    /// path, where a cache needs no check before answering from memory.
    static let unwatchedDirectories = Atomic<Int>(0)

    /// How many times an observed directory stopped being watched, in any registry, so that a
    /// check made before is not trusted after (see ``FileFreshness``).
    static let losses = Atomic<UInt64>(0)

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

    /// Checks the paths every ``retryInterval`` from now while any stream is alive, on a task of
    /// its own; the ticks end with the last stream.
    func startTicking() {
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
}
