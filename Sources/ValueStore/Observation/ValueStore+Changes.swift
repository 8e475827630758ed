extension ValueStore where Environment: Sendable {
    /// The store's state now, then again after each change, for as long as you iterate.
    ///
    /// ```swift
    /// for await state in settings.changes(environment: account) {
    ///     render(state)
    /// }
    /// ```
    ///
    /// The first element is the state when iteration begins. After each signal from
    /// ``changeSignals`` the store is loaded again: ``ValueStoreError/notFound`` yields
    /// ``StoredState/absent``, any other error ``StoredState/failed(_:)``, and iteration goes on,
    /// so a later good write yields ``StoredState/value(_:)`` again. Combinators apply as for
    /// `load`: through ``default(_:)`` absence arrives as the default value.
    ///
    /// What counts as a change depends on the store; see ``changeSignals``. File stores see
    /// writes by every store over the same path in this process, once each, and writes by other
    /// processes.
    ///
    /// > Important: Leaving the loop or cancelling its task ends the subscription and releases
    /// > the watch behind it. Changes that arrive while the consumer is busy collapse into one:
    /// > the consumer may skip a state, but the last state it receives is the newest.
    ///
    /// - Parameter environment: The environment the store needs.
    /// - Returns: An asynchronous sequence of the store's states.
    @inlinable
    public func changes(environment: Environment) -> StoredStates<Value> {
        let signals = changeSignals
        let load = load
        return StoredStates(
            signals: { signals(environment) },
            load: { try await load(environment) }
        )
    }
}

extension ValueStore where Environment == Void {
    /// ``changes(environment:)`` for a store that needs no environment.
    ///
    /// ```swift
    /// for await state in settings.changes() {
    ///     render(state)
    /// }
    /// ```
    @inlinable
    public func changes() -> StoredStates<Value> {
        changes(environment: ())
    }
}
