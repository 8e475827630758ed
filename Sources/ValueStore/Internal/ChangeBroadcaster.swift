public import Synchronization

/// Hands a change signal to every stream it started: the change source of a store built without
/// one, and of each file path in this process.
///
/// Each stream buffers only the newest signal, so a slow consumer loads once for a burst of
/// changes and still ends with the newest state. A stream leaves when its consumer stops
/// iterating. `signal()` costs one atomic load while nobody listens.
///
/// `package`: the PostgreSQL store (`ValueStorePostgres`) feeds its notifications into the same
/// engine.
@usableFromInline
package final class ChangeBroadcaster: Sendable {
    private struct Subscriber {
        let continuation: AsyncStream<Void>.Continuation
        /// The writer whose own writes this stream does not want (see ``ChangeOrigin``).
        let origin: UInt64?
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    @usableFromInline let count = Atomic<Int>(0)

    @usableFromInline
    package init() {}

    /// How many streams are listening.
    package var subscriberCount: Int { count.load(ordering: .relaxed) }

    /// A new stream of signals, until its consumer stops iterating.
    ///
    /// A stream started while ``ChangeOrigin/writer`` is set does not receive the signals of
    /// writes made under the same writer.
    @usableFromInline
    package func signals(onTermination: (@Sendable () -> Void)? = nil) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let origin = ChangeOrigin.writer
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(continuation: continuation, origin: origin)
            return id
        }
        count.add(1, ordering: .relaxed)
        continuation.onTermination = { [weak self] _ in
            self?.unsubscribe(id)
            onTermination?()
        }
        return stream
    }

    private func unsubscribe(_ id: UInt64) {
        let removed = state.withLock { $0.subscribers.removeValue(forKey: id) }
        if removed != nil {
            count.subtract(1, ordering: .relaxed)
        }
    }

    /// Signals every stream, except those started by the current writer.
    @inlinable
    package func signal() {
        guard count.load(ordering: .relaxed) > 0 else { return }
        signalListeners()
    }

    /// ``signal()`` without the check: for callers that know someone listens.
    @usableFromInline
    func signalListeners() {
        let writer = ChangeOrigin.writer
        let continuations = state.withLock { state in
            state.subscribers.values.compactMap { subscriber in
                writer == nil || subscriber.origin != writer ? subscriber.continuation : nil
            }
        }
        yield(to: continuations)
    }

    /// Signals every stream, whoever wrote: for changes made outside this process.
    package func signalAll() {
        guard count.load(ordering: .relaxed) > 0 else { return }
        yield(to: state.withLock { state in state.subscribers.values.map(\.continuation) })
    }

    /// Yields outside the lock: a yield wakes the consumer's task, taking that task's own lock,
    /// and a cancelled consumer's task holds its lock while its stream's termination unsubscribes
    /// here; yielding inside would deadlock the two.
    private func yield(to continuations: [AsyncStream<Void>.Continuation]) {
        for continuation in continuations {
            continuation.yield()
        }
    }

    /// Ends every subscriber's stream: nothing will ever be signalled again (a remote source
    /// that stopped for good).
    package func finishAll() {
        let continuations = state.withLock { state in
            defer { state.subscribers = [:] }
            return state.subscribers.values.map(\.continuation)
        }
        count.subtract(continuations.count, ordering: .relaxed)
        for continuation in continuations {
            continuation.finish()
        }
    }
}

/// Who is writing, so that a cache watching its base store is not told about its own writes.
///
/// ``ValueStore/cached()`` starts its watch and makes its writes with ``writer`` bound to its
/// own number; ``ChangeBroadcaster`` then skips that watch when those writes signal.
enum ChangeOrigin {
    @TaskLocal static var writer: UInt64?

    private static let counter = Atomic<UInt64>(1)

    /// A number no other writer has.
    static func next() -> UInt64 {
        counter.add(1, ordering: .relaxed).newValue
    }
}
