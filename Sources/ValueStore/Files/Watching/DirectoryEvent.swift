/// What a ``DirectoryWatcher`` reports about its directory.
enum DirectoryEvent: Hashable, Sendable {
    /// The entry `name` changed: replaced, deleted or moved away (or, for a watch of
    /// ``Interest/creation``, created). `writtenInPlace`: a writer closed it after writing, which
    /// this library's saves never do to the file itself (they rename a new file over it).
    case entry(_ name: String, writtenInPlace: Bool)
    /// Some entry may have changed, the watcher cannot say which: inotify's queue overflowed and
    /// dropped events, or the platform's watch names no entries.
    case anyEntry
    /// The watch ended: the directory was deleted, moved away or unmounted. Nothing more arrives.
    case lost

    /// What a watch is for.
    enum Interest: Sendable {
        /// Changes to the directory's entries: the files observed in it.
        case entries
        /// Entries created in the directory: a watch of the nearest existing ancestor of a
        /// directory that does not exist yet.
        case creation
    }

    /// `events` with each entry once (written in place if any of its events was), in order.
    static func coalesced(_ events: [DirectoryEvent]) -> [DirectoryEvent] {
        var inPlace = Set<String>()
        for case .entry(let name, true) in events {
            inPlace.insert(name)
        }
        var seen = Set<DirectoryEvent>()
        var result: [DirectoryEvent] = []
        for event in events {
            let merged =
                if case .entry(let name, _) = event {
                    DirectoryEvent.entry(name, writtenInPlace: inPlace.contains(name))
                } else { event }
            if seen.insert(merged).inserted {
                result.append(merged)
            }
        }
        return result
    }
}
