#if canImport(Glibc)
import Foundation
import Glibc
import Synchronization

/// Watches one directory with inotify on a thread of its own, and reports what happened to it:
/// entries replaced, written, deleted or moved away (or, for ``Interest/creation``, created), a
/// lost queue, a lost watch.
///
/// The directory is watched, not the file, because saves replace the file by renaming another
/// over it. The thread blocks in `poll` on the inotify descriptor and a pipe; ``stop()`` writes to
/// the pipe, and the thread closes the descriptors and exits.
final class DirectoryWatcher: Sendable {
    /// How many watches are open in this process, for the tests that check they are released.
    static let openWatches = Atomic<Int>(0)

    private let wake: Int32
    private let stopped = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)

    /// Whether the thread has closed the watch and exited.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Starts watching `directory`; `nil` when it cannot be watched (it does not exist, or
    /// inotify is unavailable). `onEvents` runs on the watcher's thread, once per batch read.
    init?(
        directory: String, interest: DirectoryEvent.Interest,
        onEvents: @escaping @Sendable (_ events: [DirectoryEvent]) -> Void
    ) {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { return nil }
        let entries =
            switch interest {
            case .entries: IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM
            case .creation: IN_CREATE | IN_MOVED_TO
            }
        // The watch itself going away (deleted, moved, unmounted) arrives as IN_DELETE_SELF,
        // IN_MOVE_SELF, IN_UNMOUNT or IN_IGNORED; a full queue as IN_Q_OVERFLOW.
        let mask = UInt32(entries | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            close(inotify)
            return nil
        }
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            close(inotify)
            return nil
        }
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe[1], F_SETFD, FD_CLOEXEC)
        let (wake, woken) = (pipe[1], pipe[0])
        self.wake = wake
        Self.openWatches.add(1, ordering: .relaxed)
        let thread = Thread { [self] in
            Self.run(inotify: inotify, wake: woken, onEvents: onEvents)
            close(inotify)
            close(woken)
            close(wake)
            Self.openWatches.subtract(1, ordering: .relaxed)
            self.closed.store(true, ordering: .releasing)
        }
        thread.name = "ValueStore directory watcher"
        thread.start()
    }

    /// Wakes the thread, which closes the watch and exits.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        var byte: UInt8 = 1
        _ = write(wake, &byte, 1)
    }

    private static func run(inotify: Int32, wake: Int32, onEvents: @Sendable ([DirectoryEvent]) -> Void) {
        var descriptors = [
            pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        let capacity = 16 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            var events: [DirectoryEvent] = []
            while true {
                let count = read(inotify, buffer, capacity)
                if count <= 0 { break }
                events += Self.events(in: UnsafeRawBufferPointer(start: buffer, count: count))
            }
            let batch = DirectoryEvent.coalesced(events)
            if !batch.isEmpty {
                onEvents(batch)
            }
        }
    }

    /// The events in a buffer of `inotify_event` records: a 16-byte header (`wd`, `mask`,
    /// `cookie`, `len`) followed by `len` bytes of NUL-padded name.
    static func events(in buffer: UnsafeRawBufferPointer) -> [DirectoryEvent] {
        var events: [DirectoryEvent] = []
        var offset = 0
        let header = 16
        let lost = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED)
        while offset + header <= buffer.count {
            let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let start = offset + header
            let end = min(start + length, buffer.count)
            let bytes = buffer[start..<end].prefix { $0 != 0 }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                // Events were dropped, and with them the names they carried.
                events.append(.anyEntry)
            } else if mask & lost != 0 {
                events.append(.lost)
            } else if !bytes.isEmpty {
                let name = String(decoding: bytes, as: UTF8.self)
                events.append(.entry(name, writtenInPlace: mask & UInt32(IN_CLOSE_WRITE) != 0))
            }
            offset = start + length
        }
        return events
    }
}
#endif
