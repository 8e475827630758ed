extension ValueStore {
    /// Loads the stored value; where nothing is stored, fetches one with `load`, saves it, and
    /// returns what was saved: the store serves as the cache of a slower source.
    ///
    /// ```swift
    /// let profile = try await savedProfile.cached(load: { try await api.profile(for: session) }, environment: session)
    /// ```
    ///
    /// Only absence fetches. A stored value that cannot be read (corrupt, undecodable, locked) is
    /// thrown, never replaced by a fetched one, as ``default(_:)`` never hides it either;
    /// swift-valuestore 0.1 fetched after any failure. Two callers that find nothing at the same
    /// time may both fetch; the last save wins. To fetch and save as one atomic step, write
    /// ``update(environment:_:)`` over an optional store instead.
    ///
    /// - Parameters:
    ///   - load: Fetches the value when nothing is stored; runs on the caller's executor.
    ///   - environment: The environment the store needs.
    /// - Returns: The stored value, or the fetched value as the store saved it.
    /// - Throws: The store's failure to load (anything but ``ValueStoreError/notFound``), `load`'s
    ///   error, or the store's failure to save.
    public func cached(
        load: () async throws -> Value,
        environment: Environment
    ) async throws -> Value {
        do {
            return try await self.load(environment)
        } catch ValueStoreError.notFound {
            return try await save(try await load(), environment)
        }
    }

    /// ``cached(load:environment:)-(()->Value,_)`` with a fetch that receives the environment, as
    /// swift-valuestore 0.1's did.
    ///
    /// ```swift
    /// let profile = try await savedProfile.cached(load: { session in try await api.profile(for: session) }, environment: session)
    /// ```
    ///
    /// - Parameters:
    ///   - load: Fetches the value for `environment` when nothing is stored; runs on the
    ///     caller's executor.
    ///   - environment: The environment the store needs, passed to `load` too.
    /// - Returns: The stored value, or the fetched value as the store saved it.
    /// - Throws: The store's failure to load (anything but ``ValueStoreError/notFound``), `load`'s
    ///   error, or the store's failure to save.
    public func cached(
        load: (_ environment: Environment) async throws -> Value,
        environment: Environment
    ) async throws -> Value {
        try await cached(load: { try await load(environment) }, environment: environment)
    }
}

extension ValueStore where Environment == Void {
    /// ``cached(load:environment:)-(()->Value,_)`` for a store that needs no environment.
    ///
    /// ```swift
    /// let catalog = try await savedCatalog.cached(load: { try await api.catalog() })
    /// ```
    public func cached(load: () async throws -> Value) async throws -> Value {
        try await cached(load: load, environment: ())
    }
}
