extension ValueStore {
    /// The same store over another value type, converting on the way in and out.
    ///
    /// ```swift
    /// let celsius = ValueStore<Void, Double>.inMemory(21)
    /// let fahrenheit = celsius.map(
    ///     load: { $0 * 9 / 5 + 32 },
    ///     save: { ($0 - 32) * 5 / 9 }
    /// )
    /// ```
    ///
    /// The conversions should round-trip: `load(save(value))` equals `value`. When the base store
    /// returns a value equal to what it was given, as the library's backends do, `save` returns
    /// the value it was given; otherwise, or when the stored type is not `Equatable`, it converts
    /// back what the base returned.
    ///
    /// - Parameters:
    ///   - load: Converts a stored value to the new type. Its errors propagate unchanged.
    ///   - save: Converts a new value to the stored type. Its errors propagate unchanged, and
    ///     nothing is saved.
    /// - Returns: A store of the new type; `update` through it stays atomic.
    @inlinable
    public func map<NewValue>(
        load: @escaping @Sendable (_ stored: Value) throws -> NewValue,
        save: @escaping @Sendable (_ value: NewValue) throws -> Value
    ) -> ValueStore<Environment, NewValue> {
        let immediately = loadImmediately.map { inner -> ValueStore<Environment, NewValue>.LoadImmediately in
            { environment in try inner(environment).map(load) }
        }
        var store = ValueStore<Environment, NewValue>(
            label: label,
            load: { environment in
                if let immediately, let value = try immediately(environment) {
                    return value
                }
                return try load(await self.load(environment))
            },
            save: { value, environment in
                let converted = try save(value)
                let stored = try await self.save(converted, environment)
                return try isUnchanged(stored, from: converted) ? value : load(stored)
            },
            remove: remove,
            update: { environment, body in
                try await updateConverting(environment, load: load, save: save, body: body)
            },
            changeSignals: changeSignals
        )
        store.loadImmediately = immediately
        return store
    }

    /// The same store, replacing the errors it throws.
    ///
    /// ```swift
    /// let settings = fileSettings.mapError { error in
    ///     AppError.persistence(error)
    /// }
    /// ```
    ///
    /// > Important: `transform` sees every error, ``ValueStoreError/notFound`` included. Return
    /// > absence unchanged if combinators above this one should still recover from it.
    ///
    /// - Parameter transform: Returns the error to throw instead.
    /// - Returns: A store that throws transformed errors; errors thrown by an `update`
    ///   transform pass through unchanged, and `update` stays atomic.
    @inlinable
    public func mapError(
        _ transform: @escaping @Sendable (_ error: any Error) -> any Error
    ) -> Self {
        let immediately = loadImmediately.map { inner -> LoadImmediately in
            { environment in
                do {
                    return try inner(environment)
                } catch {
                    throw transform(error)
                }
            }
        }
        var store = Self(
            label: label,
            load: { environment in
                // Its errors are transformed already.
                if let immediately, let value = try immediately(environment) {
                    return value
                }
                do {
                    return try await self.load(environment)
                } catch {
                    throw transform(error)
                }
            },
            save: { value, environment in
                do {
                    return try await self.save(value, environment)
                } catch {
                    throw transform(error)
                }
            },
            remove: { environment in
                do {
                    try await self.remove(environment)
                } catch {
                    throw transform(error)
                }
            },
            update: { environment, body in
                do {
                    return try await self.update(environment) { value in
                        do {
                            try await body(&value)
                        } catch let nothing as NothingToUpdate {
                            throw nothing
                        } catch {
                            throw BodyFailure(error: error)
                        }
                    }
                } catch let failure as BodyFailure {
                    throw failure.error
                } catch let nothing as NothingToUpdate {
                    // `update(_:)` found nothing stored: the store's absence, mapped like any other.
                    throw transform(ValueStoreError(.notFound, store: nothing.store))
                } catch {
                    throw transform(error)
                }
            },
            changeSignals: changeSignals
        )
        store.loadImmediately = immediately
        return store
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

extension ValueStore {
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

extension Equatable {
    @inlinable
    func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}

/// Carries an error thrown by an update's body past an error-mapping layer, so that only the
/// store's own errors are transformed.
@usableFromInline
struct BodyFailure: Error {
    @usableFromInline let error: any Error

    @inlinable
    init(error: any Error) {
        self.error = error
    }
}
