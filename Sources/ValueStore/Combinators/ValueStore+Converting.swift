// The plumbing of the combinators that convert what passes through them: their two load paths,
// their update, and how a save tells whether the base stored exactly what it was given.

extension ValueStore {
    /// Both load paths of a combinator that passes the base's values through untouched and acts
    /// only on its errors (``default(_:)``, ``mapError(_:)``): `recover` runs only when the base
    /// throws, and returns the value to load instead or throws.
    ///
    /// The fast path is the base's ``loadImmediately`` behind the same `recover`; `load` tries
    /// it first. A value costs no call beyond the base's: there is no conversion to make, so
    /// none is passed (an identity closure per layer made a chain of five 1.4× slower).
    @inlinable
    func loadPaths(
        recover: @escaping @Sendable (_ error: any Error) throws -> Value
    ) -> (load: Load, loadImmediately: LoadImmediately?) {
        let immediately = loadImmediately.map { inner -> LoadImmediately in
            { environment in
                do {
                    return try inner(environment)
                } catch {
                    return try recover(error)
                }
            }
        }
        let load: Load = { environment in
            // Its errors are recovered from already.
            if let immediately, let value = try immediately(environment) {
                return value
            }
            do {
                return try await self.load(environment)
            } catch {
                return try recover(error)
            }
        }
        return (load, immediately)
    }

    /// Both load paths of a combinator that converts the base's values
    /// (``map(load:save:)-((Value)->NewValue,_)``, ``optional()``): `convert` turns each value
    /// the base loads into the new type, and `recover` runs only when the base throws, returning
    /// the value to load instead or throwing. Errors `convert` throws propagate unchanged.
    ///
    /// The fast path is the base's ``loadImmediately`` through the same closures; `load` tries
    /// it first.
    @inlinable
    func loadPaths<NewValue>(
        convert: @escaping @Sendable (_ stored: Value) throws -> NewValue,
        recover: @escaping @Sendable (_ error: any Error) throws -> NewValue
    ) -> (
        load: ValueStore<Environment, NewValue>.Load,
        loadImmediately: ValueStore<Environment, NewValue>.LoadImmediately?
    ) {
        let immediately = loadImmediately.map { inner -> ValueStore<Environment, NewValue>.LoadImmediately in
            { environment in
                let stored: Value?
                do {
                    stored = try inner(environment)
                } catch {
                    return try recover(error)
                }
                // `nil` asks `load`.
                return try stored.map(convert)
            }
        }
        let load: ValueStore<Environment, NewValue>.Load = { environment in
            if let immediately, let value = try immediately(environment) {
                return value
            }
            let stored: Value
            do {
                stored = try await self.load(environment)
            } catch {
                return try recover(error)
            }
            return try convert(stored)
        }
        return (load, immediately)
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
