extension ValueStore where Environment: Sendable {
    /// This store, migrating the value from `old` the first time it finds none of its own.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Settings>
    ///     .jsonFile(directory.appending(path: "settings.json"))
    ///     .replacing(legacySettings)
    /// ```
    ///
    /// - `load` reads this store. Only when it reports ``ValueStoreError/notFound`` does it read
    ///   `old`, save the value here, and then remove it from `old`, so a stale old value never
    ///   comes back.
    /// - `save` writes this store only.
    /// - `remove` removes from `old`, then from this store, so a failure never leaves an old
    ///   value to be migrated back.
    ///
    /// > Important: Any error other than absence, from either store, propagates: corrupt new
    /// > data is never papered over with old data.
    ///
    /// - Parameter old: The store the value used to live in.
    /// - Returns: A store that reads and writes this one, migrating from `old` once.
    public func replacing(_ old: Self) -> Self {
        let migrate: Load = { environment in
            do {
                return try await self.load(environment)
            } catch ValueStoreError.notFound {
                let value: Value
                do {
                    value = try await old.load(environment)
                } catch ValueStoreError.notFound {
                    // A concurrent load may have just migrated the value; read it from here.
                    return try await self.load(environment)
                }
                let stored = try await self.save(value, environment)
                try await old.remove(environment)
                return stored
            }
        }
        return Self(
            label: label,
            load: migrate,
            save: { value, environment in try await self.save(value, environment) },
            remove: { environment in
                try await old.remove(environment)
                try await self.remove(environment)
            },
            update: { environment, body in
                do {
                    _ = try await migrate(environment)
                } catch ValueStoreError.notFound {
                    // Nothing to migrate: the update starts from absence.
                }
                return try await self.update(environment, body)
            },
            changeSignals: changeSignals
        )
    }
}
