#if canImport(Darwin)
import Darwin
import Dispatch
import Synchronization

/// Watches one directory with a dispatch source and reports a change to every name in it.
///
/// Untested here: the library's tests run on Linux, where ``DirectoryWatcher`` uses inotify. A
/// directory's vnode events do not say which entry changed, so every file observed in the
/// directory loads again; loads of unchanged files yield the same state.
final class DirectoryWatcher: Sendable {
    /// How many watches are open in this process, for the tests that check they are released.
    static let openWatches = Atomic<Int>(0)

    /// The source, in a lock box so the class is `Sendable` whatever the overlay declares.
    private let source: Locked<(any DispatchSourceFileSystemObject)?>

    private let closed: Locked<Bool>

    /// Whether the source was cancelled and the directory closed.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Starts watching `directory`; `nil` when it cannot be opened.
    init?(directory: String, onChange: @escaping @Sendable (_ name: String?) -> Void) {
        let descriptor = open(directory, O_EVTONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: descriptor, eventMask: [.write, .delete, .rename],
            queue: DispatchQueue(label: "ValueStore directory watcher"))
        source.setEventHandler { onChange(nil) }
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

    /// Cancels the source, which closes the directory.
    func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }
}
#endif
