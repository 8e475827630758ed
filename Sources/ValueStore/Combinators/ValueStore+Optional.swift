extension ValueStore {
    /// The same store as an optional value: absence loads as `nil`, and saving `nil` removes.
    ///
    /// ```swift
    /// let token: ValueStore<Void, String?> = tokenStore.optional()
    /// if let token = try await token.load() { … }
    /// try await token.save(nil)   // removes
    /// ```
    ///
    /// > Important: Only ``ValueStoreError/notFound`` becomes `nil`; every other error throws.
    ///
    /// - Returns: A store of `Value?` that never reports absence; `update` through it stays
    ///   atomic, and an update that sets `nil` removes.
    @inlinable
    public func optional() -> ValueStore<Environment, Value?> {
        let paths = loadPaths(
            convert: { value -> Value? in value },
            recover: { error -> Value? in
                guard ValueStoreError.notFound ~= error else { throw error }
                return nil
            }
        )
        return ValueStore<Environment, Value?>(
            label: label,
            load: paths.load,
            loadImmediately: paths.loadImmediately,
            save: { value, environment in try await self.set(value, environment: environment) },
            remove: remove,
            update: { environment, body in
                let stored = try await self.update(environment) { base in
                    var value: Value?? = .some(base)
                    try await body(&value)
                    base = value ?? nil
                }
                return .some(stored)
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}
