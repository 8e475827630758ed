extension ValueStore {
    /// Atomically loads the value, transforms it and saves the result.
    ///
    /// ```swift
    /// let total = try await counters.update(environment: account) { $0 += 1 }
    /// ```
    ///
    /// It runs the store's ``update`` closure: on the library's backends the whole
    /// read-modify-write is atomic, within the process and, for files, across processes, and the
    /// combinators that pass values through keep it atomic. A store built with
    /// ``init(label:load:loadImmediately:save:remove:update:changeSignals:)`` without an `update`
    /// closure updates by load, transform, save, which is not atomic.
    ///
    /// `transform` runs on the caller's executor and may capture the caller's state; it may
    /// await. No lock is held while it runs: the in-memory store and file stores run it again
    /// when a concurrent write got in first, so keep it short. Never write to the same store from
    /// it: file stores throw ``ValueStoreError/Code/nestedWrite``.
    ///
    /// - Parameters:
    ///   - environment: The environment the store needs.
    ///   - transform: Changes the value in place. If it throws, nothing is saved and its error
    ///     propagates unchanged.
    /// - Returns: The value as stored after the update.
    /// - Throws: ``ValueStoreError/notFound`` when nothing is stored (use ``default(_:)`` to
    ///   start from a value), the store's failure, or `transform`'s error.
    @discardableResult
    public func update(
        environment: Environment,
        _ transform: (_ value: inout Value) async throws -> Void
    ) async throws -> Value {
        let stored = try await updateExisting(environment) { value in
            var value = value
            try await transform(&value)
            return value
        }
        guard let stored else {
            throw ValueStoreError(.notFound, store: label)
        }
        return stored
    }

    /// Runs the store's ``update`` on a value that must be there: `body` gets the stored value
    /// and returns what to store instead (`nil` removes). ``update(environment:_:)`` and
    /// ``move(to:environment:)`` go through it.
    ///
    /// - Returns: What the store stored, `nil` after a remove.
    /// - Throws: ``ValueStoreError/notFound`` naming this store when nothing is stored (raised
    ///   inside the transaction as `NothingToUpdate`, so that error-mapping layers map it),
    ///   the store's failure, or `body`'s error.
    @discardableResult
    func updateExisting(
        _ environment: Environment,
        _ body: (_ value: Value) async throws -> Value?
    ) async throws -> Value? {
        let label = label
        do {
            return try await update(environment) { state in
                guard let value = state else {
                    throw NothingToUpdate(store: label)
                }
                state = try await body(value)
            }
        } catch let nothing as NothingToUpdate {
            throw ValueStoreError(.notFound, store: nothing.store)
        }
    }
}

/// What ``ValueStore/update(environment:_:)`` throws from inside the store's update when nothing
/// is stored: the store's own absence, not the transform's error, so error-mapping layers map it.
@usableFromInline
struct NothingToUpdate: Error {
    @usableFromInline let store: String
}

extension ValueStore {
    /// Saves `value`, or removes the stored value when `value` is `nil`.
    ///
    /// ```swift
    /// try await tokens.set(nil, environment: account)   // removes
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value to save, or `nil` to remove.
    ///   - environment: The environment the store needs.
    /// - Returns: The value as stored, or `nil` after a remove.
    /// - Throws: The store's failure to save or remove.
    @discardableResult
    public func set(_ value: Value?, environment: Environment) async throws -> Value? {
        try await Self.saveOrRemove(value, environment, save: save, remove: remove)
    }
}

extension ValueStore where Environment == Void {
    /// ``update(environment:_:)`` for a store that needs no environment.
    ///
    /// ```swift
    /// let launches = try await persistence.launchCount.update { $0 += 1 }
    /// ```
    @discardableResult
    public func update(
        _ transform: (_ value: inout Value) async throws -> Void
    ) async throws -> Value {
        try await update(environment: (), transform)
    }

    /// ``set(_:environment:)`` for a store that needs no environment.
    ///
    /// ```swift
    /// try await persistence.token.set(nil)   // removes
    /// ```
    @discardableResult
    public func set(_ value: Value?) async throws -> Value? {
        try await set(value, environment: ())
    }
}
