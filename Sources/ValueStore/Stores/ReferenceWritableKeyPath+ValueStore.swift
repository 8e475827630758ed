extension _AppendKeyPath where Self: Sendable {
    /// A store over an optional property of an object: the object is the environment, `nil`
    /// means absent.
    ///
    /// ```swift
    /// final class Account {
    ///     var token: String?
    /// }
    ///
    /// let token = (\Account.token).valueStore()
    /// _ = try await token.save("abc", account)   // account.token == "abc"
    /// try await token.remove(account)            // account.token == nil
    /// ```
    ///
    /// Loading a `nil` property throws ``ValueStoreError/notFound``; saving sets the property
    /// and returns the value; removing sets it to `nil`. The store holds no object: each
    /// operation reads or writes the one it is given, so one store serves every instance.
    ///
    /// ## Concurrency
    ///
    /// The store's closures are `nonisolated(nonsending)`: they read and write the property on
    /// the caller's executor, so the object never crosses to another thread, and it need not be
    /// `Sendable`. An object owned by one task or actor (a view model created on the main
    /// actor, say) stays in its isolation region as long as its callers keep it there.
    ///
    /// The key path must be `Sendable`, as key path literals to plain stored or computed
    /// properties are. A key path to an actor-isolated property, such as a property of a
    /// `@MainActor` class, is not `Sendable`, and the compiler rejects it, because the store
    /// could then touch main-actor state from any executor. For such a model, build the store
    /// from `@MainActor` closures instead, which hop to the main actor on every call:
    ///
    /// ```swift
    /// let name = ValueStore<Model, String>(
    ///     load: { @MainActor model in
    ///         guard let name = model.name else { throw ValueStoreError.notFound }
    ///         return name
    ///     },
    ///     save: { @MainActor name, model in
    ///         model.name = name
    ///         return name
    ///     },
    ///     remove: { @MainActor model in model.name = nil }
    /// )
    /// ```
    ///
    /// ``ValueStore/update`` reads the property, runs the body and writes the result in one
    /// synchronous step on the caller's executor, so no other code on that executor runs in
    /// between.
    ///
    /// > Important: The store adds no lock. An object that several threads change at once needs
    /// > its own; keep the object confined to one actor or task instead.
    ///
    /// - Returns: A store over the property.
    public func valueStore<Root, Wrapped>() -> ValueStore<Root, Wrapped>
    where Self: ReferenceWritableKeyPath<Root, Wrapped?> {
        let label = "property \(self)"
        return ValueStore<Root, Wrapped>(
            label: label,
            load: { root in
                guard let value = root[keyPath: self] else {
                    throw ValueStoreError(.notFound, store: label)
                }
                return value
            },
            save: { value, root in
                root[keyPath: self] = value
                return value
            },
            remove: { root in
                root[keyPath: self] = nil
            },
            update: { root, body in
                var value = root[keyPath: self]
                try body(&value)
                root[keyPath: self] = value
                return value
            }
        )
    }
}
