extension ValueStore where Environment: Sendable {
    /// The same store with its environment supplied once, so callers need none.
    ///
    /// ```swift
    /// let profile: ValueStore<Void, Profile> = remoteProfile.provide(session)
    /// let current = try await profile.load()
    /// ```
    ///
    /// - Parameter environment: The environment every operation receives.
    /// - Returns: A store with a `Void` environment; `update` through it stays atomic.
    @inlinable
    public func provide(_ environment: Environment) -> ValueStore<Void, Value> {
        fixing(environment)
    }

    /// The same store over any environment, every operation given `environment` whatever the
    /// caller passes: ``provide(_:)`` and ``require(_:)``. It is ``pullback(_:)`` without the
    /// transform, whose two closure calls per load made a chain of five combinators 8% slower.
    @inlinable
    func fixing<NewEnvironment>(_ environment: Environment) -> ValueStore<NewEnvironment, Value> {
        let immediately = loadImmediately.map { inner -> ValueStore<NewEnvironment, Value>.LoadImmediately in
            { _ in try inner(environment) }
        }
        return ValueStore<NewEnvironment, Value>(
            label: label,
            load: { _ in
                if let inner = loadImmediately, let value = try inner(environment) {
                    return value
                }
                return try await load(environment)
            },
            loadImmediately: immediately,
            save: { value, _ in try await save(value, environment) },
            remove: { _ in try await remove(environment) },
            update: { _, body in try await update(environment, body) },
            changeSignals: { _ in changeSignals(environment) }
        ).holdingSecrets(holdsSecrets)
    }
}
