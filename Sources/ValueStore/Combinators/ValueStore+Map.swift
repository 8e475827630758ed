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
    /// returns exactly what it was given, as the library's backends do, `save` returns the value
    /// it was given; otherwise it converts back what the base returned.
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
        let returnsSavedValue = returnsSavedValue
        let immediate = immediate.map(load: load, save: save, returnsSavedValue: returnsSavedValue)
        return ValueStore<Environment, NewValue>(
            label: label,
            transaction: transaction?.map(load: load, save: save, returnsSavedValue: returnsSavedValue),
            immediate: immediate,
            returnsSavedValue: returnsSavedValue,
            load: immediate.loading { environment in try load(await self.load(environment)) },
            save: immediate.saving { value, environment in
                let stored = try await self.save(save(value), environment)
                return returnsSavedValue ? value : try load(stored)
            },
            remove: immediate.removing { environment in try await self.remove(environment) }
        )
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
        let immediate = immediate.mapError(transform)
        return Self(
            label: label,
            transaction: transaction?.mapError(transform),
            immediate: immediate,
            returnsSavedValue: returnsSavedValue,
            load: immediate.loading { environment in
                do {
                    return try await self.load(environment)
                } catch {
                    throw transform(error)
                }
            },
            save: immediate.saving { value, environment in
                do {
                    return try await self.save(value, environment)
                } catch {
                    throw transform(error)
                }
            },
            remove: immediate.removing { environment in
                do {
                    try await self.remove(environment)
                } catch {
                    throw transform(error)
                }
            }
        )
    }
}
