#if canImport(Glibc)
import Glibc
import Synchronization

/// Watches one directory and reports what happened to it: entries created, linked, replaced,
/// written, deleted or moved away (or, for ``DirectoryEvent/Interest/creation``, created), a lost
/// queue, a lost watch.
///
/// The directory is watched, not the file, because saves replace the file by renaming another
/// over it. Every watcher is one watch descriptor in the process's single inotify instance
/// (``Inotify``), read by its single thread: a thousand watched directories cost one instance of
/// the user's 128 and one thread.
final class DirectoryWatcher: Sendable {
    private let id: UInt64
    private let closed: Closed

    /// Whether the watch has ended: stopped, or dropped by the kernel (the directory deleted,
    /// moved away or unmounted). No events arrive once it has.
    var isClosed: Bool { closed.flag.load(ordering: .acquiring) }

    /// How many watches are open in this process, for the tests that check they are released.
    static var openWatches: Int { Inotify.shared.openWatches }

    /// Starts watching `directory`; `nil` when it cannot be watched (it does not exist, or no
    /// inotify instance or watch is left). `onEvents` runs on the watching thread, once per batch.
    init?(
        directory: String, interest: DirectoryEvent.Interest,
        onEvents: @escaping @Sendable (_ events: [DirectoryEvent]) -> Void
    ) {
        let closed = Closed()
        guard
            let id = Inotify.shared.add(
                directory, interest: interest, close: { closed.flag.store(true, ordering: .releasing) },
                onEvents: onEvents)
        else { return nil }
        self.closed = closed
        self.id = id
    }

    /// Ends the watch.
    func stop() {
        Inotify.shared.remove(id)
    }

    /// The events in a buffer of `inotify_event` records, as a watch of a directory's entries
    /// sees them.
    static func events(in buffer: UnsafeRawBufferPointer) -> [DirectoryEvent] {
        Inotify.records(in: buffer).compactMap { $0.event(for: .entries) }
    }

    /// The closed flag, shared with the instance, which sets it when the kernel drops the watch.
    private final class Closed: Sendable {
        let flag = Atomic<Bool>(false)
    }
}
#endif
