extension ValueStore {
    /// The same store over another value type, converting with asynchronous functions: a
    /// decrypting service, a network lookup, or work moved off the caller's executor.
    ///
    /// ```swift
    /// let secret = sealedStore.map(
    ///     load: { sealed in try await vault.open(sealed) },
    ///     save: { secret in try await vault.seal(secret) }
    /// )
    /// ```
    ///
    /// Loads, saves and removes behave as with the synchronous
    /// ``map(load:save:)-((Value)->NewValue,_)``: the conversions should round-trip, their errors
    /// propagate unchanged (a failing `save` writes nothing), and `save` returns the value it was
    /// given when the base store returns what it was given. The conversions run on the caller's
    /// executor; call a `@concurrent` function from one to move blocking work off it.
    ///
    /// ## Updates
    ///
    /// An update runs both conversions inside the base store's ``update`` transaction: it
    /// converts the stored value with `load`, runs the body, converts the result with `save`, and
    /// the base stores it. So the update is atomic whenever the base store's is, for any stored
    /// type. On a file store the conversions may run again when another writer got in first:
    /// keep them short.
    ///
    /// - Parameters:
    ///   - load: Converts a stored value to the new type. Its errors propagate unchanged.
    ///   - save: Converts a new value to the stored type. Its errors propagate unchanged, and
    ///     nothing is saved.
    /// - Returns: A store of the new type, whose `update` is atomic when the base store's is.
    @inlinable
    public func map<NewValue>(
        load: nonisolated(nonsending) @escaping @Sendable (_ stored: Value) async throws -> NewValue,
        save: nonisolated(nonsending) @escaping @Sendable (_ value: NewValue) async throws -> Value
    ) -> ValueStore<Environment, NewValue> {
        ValueStore<Environment, NewValue>(
            label: label,
            load: { environment in try await load(await self.load(environment)) },
            save: { value, environment in
                let converted = try await save(value)
                let stored = try await self.save(converted, environment)
                return isUnchanged(stored, from: converted) ? value : try await load(stored)
            },
            remove: remove,
            update: { environment, body in
                try await updateConverting(environment, load: load, save: save, body: body)
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}
