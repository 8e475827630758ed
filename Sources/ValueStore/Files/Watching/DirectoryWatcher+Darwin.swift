#if canImport(Darwin)
import Darwin
import Dispatch
import Synchronization

/// Watches one directory with a dispatch source and reports a change to every name in it, or the
/// loss of the watch.
///
/// Untested here: the library's tests run on Linux, where ``DirectoryWatcher`` uses inotify. A
/// directory's vnode events do not say which entry changed, so every file observed in the
/// directory loads again; loads of unchanged files yield the same state. The health model is the
/// Linux one: `.delete` and `.rename` of the directory itself mean the watch is lost. Following
/// the path (another directory put in its place) and retrying a directory that cannot be watched
/// are ``FileChanges``'s, the same on both platforms. Each watcher holds one descriptor of its
/// directory, which a dispatch source needs: there is no instance to share, as inotify's is.
final class DirectoryWatcher: Sendable {
    /// How many watches are open in this process, for the tests that check they are released.
    static let openWatches = Atomic<Int>(0)

    /// The source, in a lock box so the class is `Sendable` whatever the overlay declares.
    private let source: Locked<(any DispatchSourceFileSystemObject)?>

    private let closed: Locked<Bool>

    /// Whether the source was cancelled and the directory closed.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Starts watching `directory`; `nil` when it cannot be opened. `onEvents` runs on the
    /// source's queue. Both interests watch the same vnode events: a `.write` to a directory is a
    /// change to its entries, a creation included.
    init?(
        directory: String, interest: DirectoryEvent.Interest,
        onEvents: @escaping @Sendable (_ events: [DirectoryEvent]) -> Void
    ) {
        let descriptor = open(directory, O_EVTONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: descriptor, eventMask: [.write, .delete, .rename],
            queue: DispatchQueue(label: "ValueStore directory watcher"))
        source.setEventHandler {
            // `.delete` or `.rename` of the directory itself: the watch is lost. Asked of the
            // path rather than of the source's data, so the handler needs no reference to the
            // source: the watch is lost when the path no longer names the watched directory.
            onEvents(Self.isStillWatched(descriptor, at: directory) ? [.anyEntry] : [.lost])
        }
        let closed = Locked(false)
        source.setCancelHandler {
            close(descriptor)
            closed.withLock { $0 = true }
            Self.openWatches.subtract(1, ordering: .relaxed)
        }
        Self.openWatches.add(1, ordering: .relaxed)
        source.resume()
        self.source = Locked(source)
        self.closed = closed
    }

    /// Whether `path` still names the directory open as `descriptor`.
    private static func isStillWatched(_ descriptor: Int32, at path: String) -> Bool {
        var watched = stat()
        var named = stat()
        guard fstat(descriptor, &watched) == 0, stat(path, &named) == 0 else { return false }
        return watched.st_dev == named.st_dev && watched.st_ino == named.st_ino
    }

    /// Cancels the source, which closes the directory.
    func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }
}
#endif
