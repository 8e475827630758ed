// The plumbing of the combinators that convert what passes through them: their two load paths,
// their update, and how a save tells whether the base stored exactly what it was given.

extension ValueStore {
    /// Both load paths of a combinator that converts this store's loads, built from one
    /// statement of its logic, so that ``loadImmediately`` agrees with ``load`` by construction.
    ///
    /// A load takes this store's environment from the new one with `environment` and loads this
    /// store, without suspending when this store's ``loadImmediately`` answers and through
    /// ``load`` otherwise. A value goes through `convert`; a failure of the load or of `convert`
    /// goes to `recover`, which returns a value instead or throws. An `environment` failure
    /// propagates. The new ``loadImmediately`` exists when this store's does, and returns `nil`
    /// ("ask ``load``") when it does.
    ///
    /// The logic is passed as closures, each called directly: a helper that wrapped each layer's
    /// outcome in a value cost 3× a bare load for a chain of five (see the Performance guide).
    @inlinable
    func loadPaths<NewEnvironment, NewValue>(
        environment: @escaping @Sendable (_ environment: NewEnvironment) throws -> Environment,
        convert: @escaping @Sendable (_ value: Value) throws -> NewValue,
        recover: @escaping @Sendable (_ error: any Error) throws -> NewValue
    ) -> (
        load: ValueStore<NewEnvironment, NewValue>.Load,
        loadImmediately: ValueStore<NewEnvironment, NewValue>.LoadImmediately?
    ) {
        let (load, immediately) = (self.load, loadImmediately)
        let newLoad: ValueStore<NewEnvironment, NewValue>.Load = { newEnvironment in
            let environment = try environment(newEnvironment)
            do {
                if let immediately, let value = try immediately(environment) {
                    return try convert(value)
                }
                return try convert(await load(environment))
            } catch {
                return try recover(error)
            }
        }
        let newImmediately = immediately.map { immediately -> ValueStore<NewEnvironment, NewValue>.LoadImmediately in
            { newEnvironment in
                let environment = try environment(newEnvironment)
                do {
                    guard let value = try immediately(environment) else { return nil }
                    return try convert(value)
                } catch {
                    return try recover(error)
                }
            }
        }
        return (newLoad, newImmediately)
    }

    /// The base store's ``update`` seen through a conversion: inside the base's transaction it
    /// converts what is stored with `load`, runs `body`, and stores what `save` makes of the
    /// result. Returns the value the body left when the base stored exactly what it was given,
    /// and converts back what it stored otherwise. ``map(load:save:)-((Value)->NewValue,_)``,
    /// its asynchronous twin and ``versioned(_:legacyVersion:)`` update through it.
    @inlinable
    func updateConverting<NewValue>(
        _ environment: Environment,
        load: nonisolated(nonsending) (_ stored: Value) async throws -> NewValue,
        save: nonisolated(nonsending) (_ value: NewValue) async throws -> Value,
        body: (_ value: inout NewValue?) async throws -> Void
    ) async throws -> NewValue? {
        var result: NewValue?
        var written: Value?
        let stored = try await update(environment) { stored in
            var value: NewValue? = nil
            if let stored {
                value = try await load(stored)
            }
            try await body(&value)
            stored = nil
            if let value {
                stored = try await save(value)
            }
            (result, written) = (value, stored)
        }
        guard let stored else { return nil }
        if let written, isUnchanged(stored, from: written) {
            return result
        }
        return try await load(stored)
    }
}

/// Whether a store returned exactly the value it was given, so that a conversion can return the
/// caller's value instead of converting the stored one back (decoding every saved value twice).
///
/// Only equatable values can tell; for others the stored value is converted back.
@inlinable
func isUnchanged<Value>(_ stored: Value, from given: Value) -> Bool {
    guard let stored = stored as? any Equatable else { return false }
    return stored.isEqual(to: given)
}

extension Equatable {
    @inlinable
    func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
