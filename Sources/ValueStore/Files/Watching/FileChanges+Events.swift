import Foundation

/// What the watchers report: events in a directory, turned into signals for the paths that
/// changed, unless this process wrote what is there now.
extension FileChanges {
    /// What a watcher of `directory` (or of its ancestor, while it is missing) reported.
    func receive(_ events: [DirectoryEvent], in directory: String, from id: UInt64) {
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
    func externalChange(_ events: [DirectoryEvent], in directory: String) {
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
            state.paths.compactMap { path, entry -> ([ChangeBroadcaster], FileIdentity?, String, Bool)? in
                if let writtenInPlace = named[path] {
                    return (broadcasters(of: path, state), entry.ownWrite, path, writtenInPlace)
                }
                guard everything, isEntry(path, of: prefix) else { return nil }
                return (broadcasters(of: path, state), entry.ownWrite, path, false)
            }
        }
        for (signalled, ownWrite, path, writtenInPlace) in watched {
            // This library's saves rename a new file over the path and never write it in place:
            // a write in place is another writer's, whatever the identity says.
            if !writtenInPlace, let ownWrite, ownWrite == FileIdentity(of: path) {
                continue
            }
            // A link made or pointed elsewhere at the path: its streams follow what it names now,
            // before they hear of the change and load it.
            followLink(at: path)
            for broadcaster in signalled {
                broadcaster.signalAll()
            }
        }
    }

    private func isEntry(_ path: String, of prefix: String) -> Bool {
        path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/")
    }
}
