#if PostgreSQL
import Synchronization
import ValueStore

/// The core's events from one source, recorded while connected to its hook.
///
/// ```swift
/// let events = RecordedEvents(source: table.label)
/// defer { events.stop() }
/// #expect(await eventually { events.contains { $0.kind == .cannotListen } })
/// ```
final class RecordedEvents: Sendable {
    private let recorded = Mutex<[ValueStoreEvent]>([])
    private let connection = Mutex<ValueStoreEvent.Connection?>(nil)

    init(source: String) {
        let connection = ValueStoreEvent.connect { [weak self] event in
            guard event.source == source else { return }
            self?.recorded.withLock { $0.append(event) }
        }
        self.connection.withLock { $0 = connection }
    }

    /// Disconnects from the hook.
    func stop() {
        connection.withLock { $0?.disconnect() }
    }

    /// Every event so far.
    var all: [ValueStoreEvent] {
        recorded.withLock { $0 }
    }

    /// Whether one of them satisfies `predicate`.
    func contains(where predicate: (ValueStoreEvent) -> Bool) -> Bool {
        all.contains(where: predicate)
    }
}
#endif
