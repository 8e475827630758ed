#if PostgreSQL
import Synchronization
import ValueStore

/// Every state a store's `changes()` yields, recorded by a task of its own, so a test can wait
/// for a state with a bound (``eventually(seconds:_:)``) instead of awaiting a stream that may
/// never yield.
///
/// ```swift
/// let states = RecordedStates(store.changes())
/// defer { states.cancel() }
/// #expect(await eventually { states.values.contains(2) })
/// ```
final class RecordedStates<Value: Sendable>: Sendable {
    /// What the recording task writes, apart from this object so the task does not keep it.
    private final class Log: Sendable {
        let recorded = Mutex<(states: [StoredState<Value>], ended: Bool)>(([], false))
    }

    private let log = Log()
    private let task: Task<Void, Never>

    init(_ stream: StoredStates<Value>) {
        let log = log
        task = Task {
            for await state in stream {
                log.recorded.withLock { $0.states.append(state) }
            }
            log.recorded.withLock { $0.ended = true }
        }
    }

    deinit {
        cancel()
    }

    /// Stops following the stream.
    func cancel() {
        task.cancel()
    }

    /// The states so far, oldest first.
    var states: [StoredState<Value>] {
        log.recorded.withLock { $0.states }
    }

    /// The values among them.
    var values: [Value] {
        states.compactMap(\.value)
    }

    /// The failures among them, as the library's errors.
    var failures: [ValueStoreError] {
        states.compactMap { $0.error as? ValueStoreError }
    }

    /// Whether the stream ended.
    var ended: Bool {
        log.recorded.withLock { $0.ended }
    }
}
#endif
