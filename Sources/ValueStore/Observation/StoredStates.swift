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
/// ends with the newest. A failure is an element: iteration goes on.
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
        Iterator(signals: signals().makeAsyncIterator(), load: load)
    }

    /// Loads the store first and after each signal.
    ///
    /// Like every asynchronous iterator, it belongs to the one task that consumes it, so it is
    /// not `Sendable`; the sequence is, and each task makes its own iterator.
    ///
    /// ```swift
    /// var states = settings.changes().makeAsyncIterator()
    /// while let state = await states.next() { print(state) }
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        var signals: AsyncStream<Void>.Iterator
        let load: nonisolated(nonsending) @Sendable () async throws -> Value
        var started = false

        init(
            signals: AsyncStream<Void>.Iterator,
            load: nonisolated(nonsending) @escaping @Sendable () async throws -> Value
        ) {
            self.signals = signals
            self.load = load
        }

        /// The state now, on the first call; then the state after the next change, or `nil`
        /// once the task is cancelled.
        ///
        /// ```swift
        /// let state = await states.next()
        /// ```
        ///
        /// - Returns: The store's state, or `nil` when iteration is over.
        public mutating func next() async -> StoredState<Value>? {
            if started {
                guard await signals.next(isolation: #isolation) != nil else { return nil }
            } else {
                started = true
            }
            if Task.isCancelled { return nil }
            let load = load
            return await StoredState { try await load() }
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
