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
    /// - That shared load runs in a task of its own, off the caller's executor (on the global
    ///   concurrent executor, even when the first caller is on the main actor), with the first
    ///   caller's priority and task-local values. Cancelling a caller cancels neither the load
    ///   nor its wait. A base whose load must run on an actor hops there itself.
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
        return Self(
            label: label,
            load: { _ in
                // A hit answers here, synchronously: `cache.load` checks again under its lock,
                // but reaching it costs an async call and a closure for the base load.
                if let value = cache.cachedValue {
                    return value
                }
                cache.watch { self.changeSignals(()) }
                return try await cache.load { try await self.load(()) }
            },
            // A hit answers without suspending; a miss asks `load`.
            loadImmediately: { _ in cache.cachedValue },
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
                return try await cache.update(body, of: self.update)
            },
            changeSignals: { _ in
                signals(self.changeSignals(()), before: { cache.invalidate() })
            }
        ).holdingSecrets(holdsSecrets)
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
