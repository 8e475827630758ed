import Foundation
import Synchronization

/// Arming a directory's watch: of the directory itself, or of its nearest existing ancestor
/// while it is missing, and the health and events that follow from each change of watch.
extension FileChanges {
    func nextID(_ state: inout State) -> UInt64 {
        state.nextID += 1
        return state.nextID
    }

    /// A watch for `directory`: of the directory itself, or, while it is missing, of its nearest
    /// existing ancestor, for the next component on the way; `.unwatched` when neither can be made.
    func arm(_ directory: String, id: UInt64) -> Watch {
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
    func rearm(_ directory: String, _ state: inout State) -> (replaced: (any DirectoryWatch)?, watched: Bool) {
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
    func noteChange(of directory: String, from old: Watch?, _ state: inout State) {
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
    func rearmNow(_ directory: String) {
        let (replaced, watched) = changingState { state -> ((any DirectoryWatch)?, Bool) in
            guard let entry = state.directories[directory], !entry.watch.isWatching else { return (nil, false) }
            return rearm(directory, &state)
        }
        replaced?.stop()
        if watched {
            externalChange([.anyEntry], in: directory)
        }
    }

    func makeWatcher(
        of watched: String, for directory: String, interest: DirectoryEvent.Interest, id: UInt64
    ) -> (any DirectoryWatch)? {
        watchDirectory(watched, interest) { [weak self] events in
            self?.receive(events, in: directory, from: id)
        }
    }

    /// Keeps ``unwatchedDirectories`` and ``losses`` current as a directory's watch changes.
    func updateHealth(from old: Watch?, to new: Watch?) {
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

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
