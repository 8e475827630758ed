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
    /// An update body is synchronous and runs inside the base store's update, where an
    /// asynchronous conversion cannot run. So an update through this store converts outside it,
    /// and then writes only if the stored value has not changed in between:
    ///
    /// 1. It loads the stored value and converts it with `load`.
    /// 2. It runs the body on the result, and converts the new value with `save`.
    /// 3. Inside the base store's ``update``, it compares the stored value with the one it
    ///    converted. If they are equal, it writes. If another writer got there first, it writes
    ///    nothing and starts again, converting the value the base store holds now.
    ///
    /// > Important: The update is atomic, as the base store's ``update`` is, when the stored
    /// > type is `Equatable`. The body and both conversions may then run more than once, so keep
    /// > them free of side effects. When the stored type is not `Equatable`, the update cannot
    /// > tell that the value changed: it writes what it computed, and a concurrent change made
    /// > between steps 1 and 3 is lost.
    ///
    /// - Parameters:
    ///   - load: Converts a stored value to the new type. Its errors propagate unchanged.
    ///   - save: Converts a new value to the stored type. Its errors propagate unchanged, and
    ///     nothing is saved.
    /// - Returns: A store of the new type, whose `update` is atomic when `Value` is `Equatable`.
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
                try await updateComparing(environment, load: load, save: save, body: body)
            }
        )
    }

    /// An update through asynchronous conversions: convert outside the base store's update,
    /// then write inside it only if the stored value is still the one converted.
    @inlinable
    func updateComparing<NewValue>(
        _ environment: Environment,
        load: nonisolated(nonsending) @Sendable (_ stored: Value) async throws -> NewValue,
        save: nonisolated(nonsending) @Sendable (_ value: NewValue) async throws -> Value,
        body: (_ value: inout NewValue?) throws -> Void
    ) async throws -> NewValue? {
        let canCompare = Value.self is any Equatable.Type
        var loaded: Value?
        do {
            loaded = try await self.load(environment)
        } catch ValueStoreError.notFound {
            loaded = nil
        }
        while true {
            try Task.checkCancellation()
            var value: NewValue? = nil
            if let loaded {
                value = try await load(loaded)
            }
            try body(&value)
            var converted: Value? = nil
            if let value {
                converted = try await save(value)
            }
            var found: Value?
            let stored: Value?
            do {
                stored = try await self.update(environment) { current in
                    if canCompare, !isSame(current, loaded) {
                        found = current
                        throw StoredValueChanged()
                    }
                    current = converted
                }
            } catch is StoredValueChanged {
                // Start again from the value the base store holds now, which its update just
                // showed us: no second load, and no loop on a load served from a stale cache.
                loaded = found
                continue
            }
            guard let stored else { return nil }
            if let converted, isUnchanged(stored, from: converted) {
                return value
            }
            return try await load(stored)
        }
    }
}

/// Whether two optional stored values are both absent, or both present and equal.
@inlinable
func isSame<Value>(_ current: Value?, _ loaded: Value?) -> Bool {
    switch (current, loaded) {
    case (nil, nil): true
    case (let current?, let loaded?): isUnchanged(current, from: loaded)
    default: false
    }
}

/// Thrown inside the base store's update when the value changed after it was loaded, so that
/// the update writes nothing and starts again.
@usableFromInline
struct StoredValueChanged: Error {
    @inlinable
    init() {}
}
