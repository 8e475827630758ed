extension ValueStore {
    /// Saves this store's value into `target`; this store keeps it.
    ///
    /// ```swift
    /// try await settings.copy(to: backup, environment: account)
    /// ```
    ///
    /// - Parameters:
    ///   - target: The store to save into.
    ///   - environment: The environment both stores need.
    /// - Returns: The value as `target` stored it.
    /// - Throws: ``ValueStoreError/notFound`` when this store holds nothing (then `target` is
    ///   untouched), or either store's failure.
    @discardableResult
    public func copy(to target: Self, environment: Environment) async throws -> Value {
        try await target.save(load(environment), environment)
    }

    /// Moves this store's value into `target`, removing it here only after `target` saved it.
    ///
    /// The read, the save into `target` and the removal here run inside this store's ``update``
    /// transaction, so a value saved here meanwhile, by another task or, for files, another
    /// process, is never removed by it: the removal commits only if this store still holds the
    /// value that was moved, and otherwise the move runs again with the newer value.
    ///
    /// No lock of this store is held while `target` saves, so two moves in opposite directions at
    /// the same moment never deadlock. Both finish, and one store ends empty while the other holds
    /// one of the two values (which one, and where, depends on the timing).
    ///
    /// ```swift
    /// try await legacyToken.move(to: token, environment: account)
    /// ```
    ///
    /// - Parameters:
    ///   - target: The store to move the value into.
    ///   - environment: The environment both stores need.
    /// - Returns: The value as `target` stored it.
    /// - Throws: ``ValueStoreError/notFound`` when this store holds nothing, or either store's
    ///   failure. If `target` fails to save, this store still holds the value.
    @discardableResult
    public func move(to target: Self, environment: Environment) async throws -> Value {
        var moved: Value?
        try await updateExisting(environment) { current in
            moved = try await target.save(current, environment)
            return nil
        }
        guard let moved else {
            throw ValueStoreError(.notFound, store: label)
        }
        return moved
    }
}

extension ValueStore where Environment == Void {
    /// ``copy(to:environment:)`` for stores that need no environment.
    ///
    /// ```swift
    /// try await settings.copy(to: backup)
    /// ```
    @discardableResult
    public func copy(to target: Self) async throws -> Value {
        try await copy(to: target, environment: ())
    }

    /// ``move(to:environment:)`` for stores that need no environment.
    ///
    /// ```swift
    /// try await legacyToken.move(to: token)
    /// ```
    @discardableResult
    public func move(to target: Self) async throws -> Value {
        try await move(to: target, environment: ())
    }
}
