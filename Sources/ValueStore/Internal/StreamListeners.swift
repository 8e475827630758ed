/// The streams a type hands out to its listeners, each under a number of its own, kept inside
/// the owner's lock: what the owner yields to, and what a stream that ends removes itself from.
///
/// ```swift
/// let (stream, continuation) = AsyncStream<Status>.makeStream(bufferingPolicy: .bufferingNewest(1))
/// let id = state.withLock { state in
///     continuation.yield(state.status)
///     return state.listeners.add(continuation)
/// }
/// continuation.onTermination = { _ in state.withLock { $0.listeners.remove(id) } }
/// ```
///
/// It holds no lock of its own: the owner adds a listener in the same critical section that
/// reads the state the stream starts from, so no change can come between the two. Yield to
/// ``all`` after leaving the lock: a yield wakes the listener's task, whose cancellation may be
/// taking the owner's lock to remove itself at that moment.
///
/// `package`: a sync replica's status and conflict streams and the configuration provider's
/// snapshot watchers are kept in one.
package struct StreamListeners<Element: Sendable>: Sendable {
    private var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
    private var nextID: UInt64 = 0

    /// No listeners.
    package init() {}

    /// Keeps `continuation` until ``remove(_:)`` is called with the number it returns.
    package mutating func add(_ continuation: AsyncStream<Element>.Continuation) -> UInt64 {
        let id = nextID
        nextID += 1
        continuations[id] = continuation
        return id
    }

    /// Forgets the listener added under `id`, if it is still kept.
    package mutating func remove(_ id: UInt64) {
        continuations[id] = nil
    }

    /// Every listener kept, to yield to or finish outside the owner's lock.
    package var all: [AsyncStream<Element>.Continuation] { Array(continuations.values) }
}
