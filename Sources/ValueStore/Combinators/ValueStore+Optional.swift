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
        let immediate = immediate.optional()
        return ValueStore<Environment, Value?>(
            label: label,
            transaction: transaction?.optional(),
            immediate: immediate,
            returnsSavedValue: returnsSavedValue,
            load: immediate.loading { environment in
                do {
                    return try await self.load(environment)
                } catch ValueStoreError.notFound {
                    return nil
                }
            },
            save: immediate.saving { value, environment in
                guard let value else {
                    try await self.remove(environment)
                    return nil
                }
                return try await self.save(value, environment)
            },
            remove: immediate.removing { environment in try await self.remove(environment) }
        )
    }
}
