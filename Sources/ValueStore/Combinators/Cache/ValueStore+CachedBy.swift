extension ValueStore where Environment: Sendable, Value: Sendable {
    /// The same store, cached by a faster store such as ``inMemory(_:)`` or a file in a caches
    /// directory.
    ///
    /// ```swift
    /// let profile = remoteProfile.cached(by: .inMemory())
    /// ```
    ///
    /// - `load` tries `cache` first; on a miss, or any cache failure, it loads this store and
    ///   writes the value into `cache`.
    /// - `save`, `remove` and `update` write this store first, then `cache`. When this store
    ///   throws, `cache` is emptied, since the write may have happened before the failure.
    /// - A failing cache never fails a load or a save: this store is the truth. After a failed
    ///   cache write, loads skip the cache until a later write to it succeeds.
    ///
    /// - ``changes(environment:)`` passes this store's signals through and distrusts `cache`
    ///   before each load, so it reads this store. Plain loads trust `cache` until this store's
    ///   next write; use ``cached()`` to follow changes made by other writers.
    ///
    /// > Important: Errors from this store propagate; only a cache hit skips it.
    ///
    /// - Parameter cache: A faster store that holds a copy of the value.
    /// - Returns: A store that serves loads from `cache` when it can.
    public func cached(by cache: Self) -> Self {
        let guardian = CacheGuard()
        // Copies what this store now holds (`nil`: nothing) into the cache; called with the lock
        // held, after this store's operation succeeded.
        let copyToCache: @Sendable (_ stored: Value?, _ environment: Environment) async -> Void = {
            stored, environment in
            await guardian.write {
                _ = try await cache.set(stored, environment: environment)
            } orRemove: {
                try await cache.remove(environment)
            }
        }
        // After any error from this store, the cache may be stale (a save that failed after writing
        // left the new value here): empty it, and distrust it if even that fails.
        let distrustCache: @Sendable (_ environment: Environment) async -> Void = { environment in
            await guardian.write {
                try await cache.remove(environment)
            } orRemove: {
                try await cache.remove(environment)
            }
        }
        // Runs a write to this store under the lock, then copies what it stored into the cache.
        @Sendable func writing(
            _ environment: Environment,
            _ write: () async throws -> Value?
        ) async throws -> Value? {
            try await guardian.lock.withLock {
                let stored: Value?
                do {
                    stored = try await write()
                } catch {
                    await distrustCache(environment)
                    throw error
                }
                await copyToCache(stored, environment)
                return stored
            }
        }
        return Self(
            label: label,
            load: { environment in
                if guardian.isTrusted {
                    do {
                        return try await cache.load(environment)
                    } catch {
                        // A miss or a failing cache: the base store answers.
                    }
                }
                return try await guardian.lock.withLock {
                    let value = try await self.load(environment)
                    await copyToCache(value, environment)
                    return value
                }
            },
            save: { value, environment in
                // A successful save always stores a value; `nil` only marks "nothing stored".
                try await writing(environment) { try await self.save(value, environment) }!
            },
            remove: { environment in
                _ = try await writing(environment) {
                    try await self.remove(environment)
                    return nil
                }
            },
            update: { environment, body in
                try await writing(environment) { try await self.update(environment, body) }
            },
            changeSignals: { environment in
                // The cache store may hold what this store held before the change.
                signals(self.changeSignals(environment), before: { guardian.distrust() })
            }
        ).holdingSecrets(holdsSecrets)
    }
}
