/// The states of a store over time: the state when iteration begins, then one after each
/// change. ``ValueStore/changes(environment:)`` returns it.
///
/// ```swift
/// for await state in settings.changes() {
///     print(state)
/// }
/// ```
///
/// Each iteration subscribes to the store's ``ValueStore/changeSignals`` and, first and after
/// each signal, loads the store on the consumer's executor. Signals that arrive while the
/// consumer is busy collapse into one, so a slow consumer skips intermediate states but always
/// ends with the newest. A failure is an element: iteration goes on, and the store is loaded
/// again on its own, with backoff, until a load succeeds. A store whose signals come from a
/// server (a PostgreSQL table) yields ``StoredState/failed(_:)`` while it cannot follow them.
///
/// Iteration ends when the consuming task is cancelled or the loop is left; either releases the
/// subscription and whatever watch stands behind it. It also ends if the store's signals end.
public struct StoredStates<Value>: AsyncSequence, Sendable {
    /// The element: the store's state.
    public typealias Element = StoredState<Value>
    /// Iteration never throws; failures are elements.
    public typealias Failure = Never

    @usableFromInline let signals: @Sendable () -> AsyncStream<Void>
    @usableFromInline let load: nonisolated(nonsending) @Sendable () async throws -> Value

    @inlinable
    init(
        signals: @escaping @Sendable () -> AsyncStream<Void>,
        load: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
    ) {
        self.signals = signals
        self.load = load
    }

    /// Subscribes to the store's signals and returns an iterator over its states.
    ///
    /// ```swift
    /// var states = settings.changes().makeAsyncIterator()
    /// let current = await states.next()
    /// ```
    ///
    /// - Returns: An iterator whose first element is the state now.
    public func makeAsyncIterator() -> Iterator {
        let feeds = ChangeFeeds()
        let signals = ChangeFeeds.$recording.withValue(feeds) { self.signals() }
        return Iterator(signals: signals, load: load, feeds: feeds)
    }

    /// Loads the store first and after each signal, and again after a failure until it
    /// succeeds.
    ///
    /// Like every asynchronous iterator, it belongs to the one task that consumes it, so it is
    /// not `Sendable`; the sequence is, and each task makes its own iterator.
    ///
    /// ```swift
    /// var states = settings.changes().makeAsyncIterator()
    /// while let state = await states.next() { print(state) }
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        let stream: AsyncStream<Void>
        var signals: AsyncStream<Void>.Iterator
        let load: nonisolated(nonsending) @Sendable () async throws -> Value
        /// The remote sources of the signals; one that failed is reported as the state.
        let feeds: ChangeFeeds
        var started = false
        /// After the first failure: the signals and the retries, merged.
        var retries: StoredStatesRetries?
        var wakeups: AsyncStream<StoredStatesRetries.Wakeup>.Iterator?
        /// The failure yielded last, until a state that is not a failure.
        var failure: (any Error)?

        init(
            signals: AsyncStream<Void>,
            load: nonisolated(nonsending) @escaping @Sendable () async throws -> Value,
            feeds: ChangeFeeds
        ) {
            self.stream = signals
            self.signals = signals.makeAsyncIterator()
            self.load = load
            self.feeds = feeds
        }

        /// The state now, on the first call; then the state after the next change, or `nil`
        /// once the task is cancelled.
        ///
        /// After a failure the store is loaded again on its own, after 0.1 s, then twice as long
        /// each time up to 5 s, until a load succeeds. Such a retry yields only a state that
        /// differs from the failure yielded last (another ``ValueStoreError/Code``, another
        /// error, or a value); a signal yields whatever the load finds, except the same
        /// ``ValueStoreError/Code/unavailable`` failure again: an outage is reported once.
        ///
        /// ```swift
        /// let state = await states.next()
        /// ```
        ///
        /// - Returns: The store's state, or `nil` when iteration is over.
        public mutating func next() async -> StoredState<Value>? {
            while true {
                var retrying = false
                if !started {
                    started = true
                } else if let retries, wakeups != nil {
                    guard await wakeups?.next(isolation: #isolation) != nil else { return nil }
                    retrying = !retries.tookSignal()
                } else {
                    guard await signals.next(isolation: #isolation) != nil else { return nil }
                }
                if Task.isCancelled { return nil }
                let load = load
                var state = await StoredState { try await load() }
                // A consumer cancelled during the load gets no state made of its cancellation.
                if Task.isCancelled { return nil }
                if let failure = feeds.failure {
                    state = .failed(failure)
                }
                guard case .failed(let error) = state else {
                    failure = nil
                    retries?.succeeded()
                    return state
                }
                if retries == nil {
                    // From now on the signals are read by a task that merges them with retries.
                    let retries = StoredStatesRetries(signals: stream)
                    self.retries = retries
                    wakeups = retries.wakeups.makeAsyncIterator()
                }
                retries?.failed()
                // An outage goes on whatever signalled: the same `unavailable` again says nothing new.
                let isUnavailable = (error as? ValueStoreError)?.code == .unavailable
                let repeated =
                    (retrying || isUnavailable) && failure.map { StoredStatesRetries.isSame($0, error) } == true
                failure = error
                if !repeated {
                    return state
                }
            }
        }

        /// ``next()``, on the given actor.
        ///
        /// ```swift
        /// let state = await states.next(isolation: #isolation)
        /// ```
        ///
        /// - Parameter actor: The actor to run on; the caller's.
        /// - Returns: The store's state, or `nil` when iteration is over.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> StoredState<Value>? {
            await next()
        }
    }
}
