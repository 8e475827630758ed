#if canImport(Glibc)
import Foundation
import Glibc

/// The process's one inotify instance, and the one thread that reads it: every
/// ``DirectoryWatcher`` is a watch descriptor in it.
///
/// A user has 128 inotify instances, shared by all of their processes; a watch descriptor costs
/// none of them (the user's limit, `max_user_watches`, is in the tens of thousands). The instance
/// is opened by the first watch and kept for the life of the process, so is its thread, which
/// blocks in `read` and hands each batch of events to the watches they name, outside the lock.
///
/// Watches of the same directory share its descriptor (the kernel returns the same one for the
/// same inode), so every descriptor is added with the same mask and each watch keeps the events
/// its ``DirectoryEvent/Interest`` asks for. The descriptor is removed with its last watch.
final class Inotify: Sendable {
    /// The process's instance.
    static let shared = Inotify()

    /// Everything a directory's changes can be: entries created, linked, renamed in or out,
    /// deleted, or closed after writing, and the directory itself deleted or moved away.
    static let mask = UInt32(
        IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_ONLYDIR)

    private struct Watch {
        let interest: DirectoryEvent.Interest
        /// Marks the watch closed.
        let close: @Sendable () -> Void
        let onEvents: @Sendable (_ events: [DirectoryEvent]) -> Void
    }

    private struct State {
        /// The instance's descriptor; `-1` until one could be opened.
        var descriptor: Int32 = -1
        /// The watches of each watch descriptor, by their numbers.
        var watches: [Int32: [UInt64: Watch]] = [:]
        /// The watch descriptor of each watch.
        var descriptors: [UInt64: Int32] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// How many watches are open, for the tests that check they are released.
    var openWatches: Int { state.withLock { $0.descriptors.count } }

    /// Watches `directory` for `interest`; returns the watch's number, or `nil` when no instance
    /// can be opened (the user has none left) or the directory cannot be watched (missing, not a
    /// directory, no permission, no watch left). `close` runs when the watch ends.
    func add(
        _ directory: String, interest: DirectoryEvent.Interest, close: @escaping @Sendable () -> Void,
        onEvents: @escaping @Sendable (_ events: [DirectoryEvent]) -> Void
    ) -> UInt64? {
        // A few non-blocking system calls, under the lock so that a descriptor is never removed
        // while another watch of the same directory is being added.
        state.withLock { state -> UInt64? in
            if state.descriptor < 0 {
                let descriptor = inotify_init1(Int32(IN_CLOEXEC))
                guard descriptor >= 0 else { return nil }
                state.descriptor = descriptor
                let thread = Thread { [self] in read(descriptor) }
                thread.name = "ValueStore directory watcher"
                thread.start()
            }
            let watch = inotify_add_watch(state.descriptor, directory, Self.mask)
            guard watch >= 0 else { return nil }
            state.nextID += 1
            let id = state.nextID
            state.watches[watch, default: [:]][id] = Watch(interest: interest, close: close, onEvents: onEvents)
            state.descriptors[id] = watch
            return id
        }
    }

    /// Ends the watch `id`; the watch descriptor goes with its last watch.
    func remove(_ id: UInt64) {
        state.withLock { state in
            guard let watch = state.descriptors.removeValue(forKey: id) else { return }
            state.watches[watch]?[id]?.close()
            state.watches[watch]?[id] = nil
            if state.watches[watch]?.isEmpty == true {
                state.watches[watch] = nil
                _ = inotify_rm_watch(state.descriptor, watch)
            }
        }
    }

    /// The thread's loop: reads batches of events and hands each watch its own.
    private func read(_ descriptor: Int32) {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = Glibc.read(descriptor, buffer, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            deliver(Self.records(in: UnsafeRawBufferPointer(start: buffer, count: count)))
        }
    }

    private func deliver(_ records: [Record]) {
        // Each watch's events, in order; watches of a descriptor the kernel dropped end here.
        let batches = state.withLock { state -> [(Watch, [DirectoryEvent])] in
            var batches: [UInt64: (Watch, [DirectoryEvent])] = [:]
            var order: [UInt64] = []
            for record in records {
                let targets =
                    record.isOverflow
                    ? state.watches.values.flatMap { $0 }
                    : Array(state.watches[record.watch] ?? [:])
                for (id, watch) in targets {
                    guard let event = record.event(for: watch.interest) else { continue }
                    if batches[id] == nil {
                        order.append(id)
                        batches[id] = (watch, [])
                    }
                    batches[id]!.1.append(event)
                }
                if record.mask & UInt32(IN_IGNORED) != 0, let ended = state.watches.removeValue(forKey: record.watch) {
                    for (id, watch) in ended {
                        state.descriptors[id] = nil
                        watch.close()
                    }
                }
            }
            return order.map { batches[$0]! }
        }
        for (watch, events) in batches {
            let coalesced = DirectoryEvent.coalesced(events)
            if !coalesced.isEmpty {
                watch.onEvents(coalesced)
            }
        }
    }

    /// One `inotify_event`.
    struct Record {
        let watch: Int32
        let mask: UInt32
        let name: String

        var isOverflow: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }

        /// What this record means to a watch of `interest`; `nil` when nothing it asked for.
        func event(for interest: DirectoryEvent.Interest) -> DirectoryEvent? {
            // Events were dropped, and with them the names they carried.
            if isOverflow { return .anyEntry }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED) != 0 { return .lost }
            guard !name.isEmpty else { return nil }
            let asked =
                switch interest {
                case .entries: UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE)
                case .creation: UInt32(IN_CREATE | IN_MOVED_TO)
                }
            guard mask & asked != 0 else { return nil }
            return .entry(name, writtenInPlace: mask & UInt32(IN_CLOSE_WRITE) != 0)
        }
    }

    /// The records in a buffer of `inotify_event`s: a 16-byte header (`wd`, `mask`, `cookie`,
    /// `len`) followed by `len` bytes of NUL-padded name.
    static func records(in buffer: UnsafeRawBufferPointer) -> [Record] {
        var records: [Record] = []
        var offset = 0
        let header = 16
        while offset + header <= buffer.count {
            let watch = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let start = offset + header
            let end = min(start + length, buffer.count)
            let name = String(decoding: buffer[start..<end].prefix { $0 != 0 }, as: UTF8.self)
            records.append(Record(watch: watch, mask: mask, name: name))
            offset = start + length
        }
        return records
    }
}
#endif
