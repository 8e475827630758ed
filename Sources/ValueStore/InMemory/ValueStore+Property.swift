extension ValueStore {
    /// A store over an optional property of an object: the object is the environment, `nil`
    /// means absent.
    ///
    /// ```swift
    /// final class Account {
    ///     var token: String?
    /// }
    ///
    /// let token = ValueStore<Account, String>.property(\.token)
    /// _ = try await token.save("abc", account)   // account.token == "abc"
    /// try await token.remove(account)            // account.token == nil
    /// ```
    ///
    /// Loading a `nil` property throws ``ValueStoreError/notFound``; saving sets the property
    /// and returns the value; removing sets it to `nil`. The store holds no object: each
    /// operation reads or writes the one it is given, so one store serves every instance. The
    /// key path's `valueStore()` method, from the original library, returns the same store:
    /// `(\Account.token).valueStore()`.
    ///
    /// ## Concurrency
    ///
    /// The store's closures are `nonisolated(nonsending)`: they read and write the property on
    /// the caller's executor, so the object never crosses to another thread, and it need not be
    /// `Sendable`. An object owned by one task or actor stays in its isolation region as long
    /// as its callers keep it there. ``update`` reads the property, runs the body and writes
    /// the result in one synchronous step on the caller's executor, so no other code on that
    /// executor runs in between.
    ///
    /// The key path must be `Sendable`, as key path literals to plain stored or computed
    /// properties are. A key path to an actor-isolated property, such as a property of a
    /// `@MainActor` class, is not `Sendable`, and the compiler rejects it: the store could
    /// otherwise touch main-actor state from any executor. For such a model, build the store
    /// from `@MainActor` closures instead, which run on the main actor whoever calls them:
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
    /// > Important: The store adds no lock. An object that several threads change at once
    /// > needs its own; keep the object confined to one actor or task instead.
    ///
    /// - Parameter keyPath: The property, of type `Value?`.
    /// - Returns: A store over the property.
    public static func property(_ keyPath: any ReferenceWritableKeyPath<Environment, Value?> & Sendable) -> Self {
        let label = "property \(keyPath)"
        return Self(
            label: label,
            load: { object in
                guard let value = object[keyPath: keyPath] else {
                    throw ValueStoreError(.notFound, store: label)
                }
                return value
            },
            save: { value, object in
                object[keyPath: keyPath] = value
                return value
            },
            remove: { object in
                object[keyPath: keyPath] = nil
            },
            update: { object, body in
                var value = object[keyPath: keyPath]
                try await body(&value)
                object[keyPath: keyPath] = value
                return value
            }
        )
    }
}

extension _AppendKeyPath where Self: Sendable {
    /// A store over the optional property this key path names; the same store as
    /// ``ValueStore/property(_:)``, under the original library's name.
    ///
    /// ```swift
    /// let token = (\Account.token).valueStore()   // ValueStore<Account, String>
    /// ```
    ///
    /// The method is declared on the standard library's key path protocol so that it exists
    /// only for `Sendable` key paths; ``ValueStore/property(_:)`` explains why they must be.
    ///
    /// - Returns: A store over the property.
    public func valueStore<Root, Wrapped>() -> ValueStore<Root, Wrapped>
    where Self: ReferenceWritableKeyPath<Root, Wrapped?> {
        .property(self)
    }
}
