import Foundation
import Synchronization

@testable import ValueStore

/// Directory watches a test drives: a ``FileSystem`` that reads and writes the real disk, but
/// whose directory events arrive only when the test sends them, on the test's own task.
///
/// ```swift
/// let watches = FakeWatches()
/// let store = watches.jsonFile(url, as: Int.self)
/// try writeAsAnotherProcess(7, to: url)
/// watches.send([.entry("count.json", writtenInPlace: false)], to: directory)
/// ```
///
/// Like the live watcher, a watch cannot be made of a directory that does not exist, nor of one
/// under a prefix passed to ``failWatches(under:_:)`` (as when no inotify instance is left).
/// ``send(_:to:)`` hands the events to the registry before it returns, so a stream's signal is
/// already buffered when the test goes on.
final class FakeWatches: Sendable {
    /// One fake watch, closed by ``stop()`` at once.
    final class Watch: DirectoryWatch {
        let directory: String
        let interest: DirectoryEvent.Interest
        let onEvents: @Sendable (_ events: [DirectoryEvent]) -> Void
        private let closed = Atomic<Bool>(false)

        init(
            directory: String, interest: DirectoryEvent.Interest,
            onEvents: @escaping @Sendable (_ events: [DirectoryEvent]) -> Void
        ) {
            self.directory = directory
            self.interest = interest
            self.onEvents = onEvents
        }

        var isClosed: Bool { closed.load(ordering: .acquiring) }

        func stop() {
            closed.store(true, ordering: .releasing)
        }
    }

    private struct State {
        var watches: [Watch] = []
        var unwatchable: Set<String> = []
    }

    private let state: Shared<State>
    /// The live file system, watching through this fake with a change registry of its own.
    let fileSystem: FileSystem

    /// - Parameter retryInterval: How often the registry checks its directories' paths and
    ///   retries those not watched (``FileChanges/retryInterval``).
    init(retryInterval: Duration = .seconds(2)) {
        let state = Shared(State())
        self.state = state
        var fileSystem = FileSystem.live
        fileSystem.changes = FileChanges(retryInterval: retryInterval) { directory, interest, onEvents in
            var status = stat()
            guard stat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else { return nil }
            let watch = Watch(directory: directory, interest: interest, onEvents: onEvents)
            let made = state.withLock { state -> Bool in
                guard !state.unwatchable.contains(where: { directory.hasPrefix($0) }) else { return false }
                state.watches.removeAll { $0.isClosed }
                state.watches.append(watch)
                return true
            }
            return made ? watch : nil
        }
        self.fileSystem = fileSystem
    }

    /// Hands `events` to every open watch of `directory`, as its watcher's thread would.
    func send(_ events: [DirectoryEvent], to directory: URL) {
        let path = Self.path(of: directory)
        let watches = state.withLock { $0.watches.filter { !$0.isClosed && $0.directory == path } }
        for watch in watches {
            watch.onEvents(events)
        }
    }

    /// Reports that the entry `name` of `directory` was replaced, deleted or moved away.
    func sendChange(of name: String, in directory: URL) {
        send([.entry(name, writtenInPlace: false)], to: directory)
    }

    /// The open watch of `directory`, if there is one.
    func watch(of directory: URL) -> Watch? {
        let path = Self.path(of: directory)
        return state.withLock { $0.watches.last { !$0.isClosed && $0.directory == path } }
    }

    /// How many watches are open.
    var openWatches: Int {
        state.withLock { $0.watches.count { !$0.isClosed } }
    }

    /// Makes every watch of a directory under `prefix` fail (`false` lifts it).
    func failWatches(under prefix: URL, _ failing: Bool) {
        let path = Self.path(of: prefix)
        state.withLock { state in
            if failing {
                state.unwatchable.insert(path)
            } else {
                state.unwatchable.remove(path)
            }
        }
    }

    /// A JSON file store over this file system.
    func jsonFile<Value: Codable & Sendable>(_ url: URL, as type: Value.Type = Value.self) -> ValueStore<Void, Value> {
        ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem).coded(.json)
    }

    /// The path the registry names `directory` by.
    static func path(of directory: URL) -> String {
        DurableFile(directory.appending(path: "file"), options: .default, fileSystem: .live).directory
    }
}
