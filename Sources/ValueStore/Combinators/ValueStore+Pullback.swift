extension ValueStore {
    /// The same store, reading its environment from a wider one.
    ///
    /// ```swift
    /// let profile: ValueStore<AppEnvironment, Profile> = remoteProfile.pullback { $0.session }
    /// ```
    ///
    /// - Parameter transform: Extracts this store's environment from the wider one.
    /// - Returns: A store over the wider environment; `update` through it stays atomic.
    @inlinable
    public func pullback<NewEnvironment>(
        _ transform: @escaping @Sendable (_ environment: NewEnvironment) -> Environment
    ) -> ValueStore<NewEnvironment, Value> {
        pullback(throwing: transform)
    }

    /// The same store, reading its environment from a wider one through a transform that may
    /// fail, such as taking keys out of a vault that may be locked.
    @inlinable
    func pullback<NewEnvironment>(
        throwing transform: @escaping @Sendable (_ environment: NewEnvironment) throws -> Environment
    ) -> ValueStore<NewEnvironment, Value> {
        let immediately = loadImmediately.map { inner -> ValueStore<NewEnvironment, Value>.LoadImmediately in
            { environment in try inner(transform(environment)) }
        }
        return ValueStore<NewEnvironment, Value>(
            label: label,
            load: { environment in
                let base = try transform(environment)
                if let inner = loadImmediately, let value = try inner(base) {
                    return value
                }
                return try await load(base)
            },
            loadImmediately: immediately,
            save: { value, environment in try await save(value, transform(environment)) },
            remove: { environment in try await remove(transform(environment)) },
            update: { environment, body in try await update(transform(environment), body) },
            changeSignals: { environment in
                do {
                    return try changeSignals(transform(environment))
                } catch {
                    // No environment, no signals: the one load reports the failure.
                    return AsyncStream { $0.finish() }
                }
            }
        ).holdingSecrets(holdsSecrets)
    }

    /// The same store, reading its environment from a wider one through a key path.
    ///
    /// ```swift
    /// let profile: ValueStore<AppEnvironment, Profile> = remoteProfile.pullback(\.session)
    /// ```
    ///
    /// - Parameter keyPath: Where this store's environment sits in the wider one.
    /// - Returns: A store over the wider environment; `update` through it stays atomic.
    @inlinable
    public func pullback<NewEnvironment>(
        _ keyPath: any KeyPath<NewEnvironment, Environment> & Sendable
    ) -> ValueStore<NewEnvironment, Value> {
        pullback { $0[keyPath: keyPath] }
    }
}
