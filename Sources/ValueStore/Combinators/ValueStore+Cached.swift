extension ValueStore where Environment == Void, Value: Sendable {
    /// The same store with its value cached in memory, so repeated loads skip the backend.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Settings>.jsonFile(url).cached()
    /// let first = try await settings.load()    // reads the file
    /// let second = try await settings.load()   // served from memory
    /// ```
    ///
    /// - A hit performs no base load. Concurrent loads of a cold cache share one base load.
    /// - The cache changes only after the base save succeeds; `remove` empties it. A failed save
    ///   empties it, so the next load reads what the base really holds.
    /// - Overlapping saves, and loads that overlap a save, are never cached: the next load reads
    ///   the base store, so cache and base always agree.
    /// - `update` goes through the base store's `update` and stays atomic.
    ///
    /// - The cache follows the base store's ``changeSignals`` from its first load or write for
    ///   as long as the store lives, and empties itself on each change it did not make: over a
    ///   file, a write by another store for the same path or by another process is seen by the
    ///   next load once its signal arrives (for another process, within milliseconds).
    /// - ``changes()`` through the cache empties it before each load, so it never yields a
    ///   stale cached value.
    ///
    /// > Important: The cache sees only the changes its base store signals; see
    /// > ``changeSignals``. Only ``ValueStoreError/notFound`` is treated as a miss; errors are
    /// > never cached.
    ///
    /// - Returns: A store that serves repeated loads from memory.
    @inlinable
    public func cached() -> Self {
        let cache = MemoryCache<Value>()
        // A hit answers without suspending; a miss (`nil`) asks `load`.
        let hit: LoadImmediately = { _ in cache.cachedValue }
        return Self(
            label: label,
            load: { environment in
                // A hit answers here, synchronously: `cache.load` checks again under its lock,
                // but reaching it costs an async call and a closure for the base load.
                if let value = try hit(environment) {
                    return value
                }
                cache.watch { self.changeSignals(()) }
                return try await cache.load { try await self.load(()) }
            },
            loadImmediately: hit,
            save: { value, _ in
                cache.watch { self.changeSignals(()) }
                // A successful save always returns a value; `nil` only marks "nothing stored".
                return try await cache.mutate { try await self.save(value, ()) }!
            },
            remove: { _ in
                cache.watch { self.changeSignals(()) }
                _ = try await cache.mutate {
                    try await self.remove(())
                    return nil
                }
            },
            update: { _, body in
                cache.watch { self.changeSignals(()) }
                return try await cache.mutate { try await self.update((), body) }
            },
            changeSignals: { _ in
                signals(self.changeSignals(()), before: { cache.invalidate() })
            }
        )
    }
}

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
        )
    }
}

/// `base`'s signals, running `action` before passing each on: caches empty themselves, so the
/// load a signal triggers reads the base store.
@usableFromInline
func signals(_ base: AsyncStream<Void>, before action: @escaping @Sendable () -> Void) -> AsyncStream<Void> {
    let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let forwarding = Task {
        for await _ in base {
            action()
            continuation.yield()
        }
        continuation.finish()
    }
    continuation.onTermination = { _ in forwarding.cancel() }
    return stream
}
