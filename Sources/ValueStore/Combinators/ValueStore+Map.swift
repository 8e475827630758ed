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
        let paths = loadPaths(convert: load, recover: { error in throw error })
        return ValueStore<Environment, NewValue>(
            label: label,
            load: paths.load,
            loadImmediately: paths.loadImmediately,
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
        ).holdingSecrets(holdsSecrets)
    }
}
