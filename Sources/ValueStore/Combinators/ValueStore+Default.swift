extension ValueStore where Value: Sendable {
    /// The same store, loading `defaultValue` where nothing is stored.
    ///
    /// ```swift
    /// let launches = ValueStore<Void, Int>.inMemory().default(0)
    /// try await launches.update { $0 += 1 }   // 1, atomically, from nothing
    /// ```
    ///
    /// Saves and removes go to the base store; after a remove, loads return `defaultValue`
    /// again. The default is not saved until you save.
    ///
    /// > Important: Only ``ValueStoreError/notFound`` becomes the default. Corrupt, undecodable
    /// > or unreadable data still throws, so a default never hides damaged data.
    ///
    /// - Parameter defaultValue: The value loaded where nothing is stored.
    /// - Returns: A store that never reports absence; `update` through it stays atomic.
    @inlinable
    public func `default`(_ defaultValue: Value) -> Self {
        let paths = loadPaths { error in
            guard ValueStoreError.notFound ~= error else { throw error }
            return defaultValue
        }
        return Self(
            label: label,
            load: paths.load,
            loadImmediately: paths.loadImmediately,
            save: save,
            remove: remove,
            update: { environment, body in
                let stored = try await self.update(environment) { base in
                    var value: Value? = base ?? defaultValue
                    try await body(&value)
                    base = value
                }
                return stored ?? defaultValue
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}

extension ValueStore {
    /// Loads the value, or `defaultValue` where nothing is stored.
    ///
    /// ```swift
    /// let name = try await profiles.load(default: "Guest", environment: session)
    /// ```
    ///
    /// - Parameters:
    ///   - defaultValue: The value returned where nothing is stored.
    ///   - environment: The environment the store needs.
    /// - Returns: The stored value, or `defaultValue`.
    /// - Throws: Every error but ``ValueStoreError/notFound``: a default never hides corrupt
    ///   or unreadable data.
    @inlinable
    public func load(default defaultValue: Value, environment: Environment) async throws -> Value {
        do {
            return try await load(environment)
        } catch ValueStoreError.notFound {
            return defaultValue
        }
    }
}

extension ValueStore where Environment == Void {
    /// ``load(default:environment:)`` for a store that needs no environment.
    ///
    /// ```swift
    /// let theme = try await persistence.theme.load(default: .system)
    /// ```
    @inlinable
    public func load(default defaultValue: Value) async throws -> Value {
        try await load(default: defaultValue, environment: ())
    }
}
