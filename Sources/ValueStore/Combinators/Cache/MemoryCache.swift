/// The state behind ``ValueStore/cached()``: one cached value, one shared load, and a
/// generation count that keeps a stale load or an overlapping save out of the cache.
///
/// - A hit returns the cached value without touching the base store.
/// - Concurrent loads of a cold cache share one base load.
/// - A mutation (save, remove, update) empties the cache when it starts and fills it when it
///   succeeds, unless another mutation overlapped it; then the cache stays empty and the next
///   load reads the base. A load that overlapped a mutation is never cached.
@usableFromInline
final class MemoryCache<Value: Sendable>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var value: Value?
        var generation: UInt64 = 0
        var mutationsInFlight = 0
        var sharedLoad: SharedLoad?
        var nextLoadID: UInt64 = 0
        /// Empties the cache on each change made by other writers; started once.
        var watch: Task<Void, Never>?
    }

    struct SharedLoad {
        let id: UInt64
        let task: Task<Value, any Error>
    }

    private enum LoadStep {
        case hit(Value)
        case wait(Task<Value, any Error>)
    }

    @usableFromInline let state = Locked(State())

    /// The number this cache writes under, so that its watch skips its own writes.
    let writer = ChangeOrigin.next()

    /// The files the base store reads, recorded as the watch starts: while one of their
    /// directories is not watched, a hit first checks that they did not change.
    @usableFromInline let freshness = FileFreshness()

    /// The remote sources of the base store's signals (a PostgreSQL listener), recorded as the
    /// watch starts: while one cannot vouch that no change was missed, every load reads the base.
    @usableFromInline let feeds = ChangeFeeds()

    @usableFromInline
    init() {}

    deinit {
        // Cancelled outside the lock: cancelling runs the watch's stream terminations.
        state.withLock { $0.watch }?.cancel()
    }

    /// Starts following the base store's signals, once, emptying the cache on each change
    /// another writer made. The watch ends when the cache goes away.
    @usableFromInline
    func watch(_ signals: @Sendable () -> AsyncStream<Void>) {
        state.withLock { state in
            guard state.watch == nil else { return }
            let changes = FileFreshness.$recording.withValue(freshness) {
                ChangeFeeds.$recording.withValue(feeds) {
                    ChangeOrigin.$writer.withValue(writer) { signals() }
                }
            }
            state.watch = Task { [weak self] in
                for await _ in changes {
                    self?.invalidate()
                }
            }
        }
    }

    /// Empties the cache: the base store changed. Loads and writes in flight are not cached.
    @usableFromInline
    func invalidate() {
        state.withLock { state in
            state.generation += 1
            state.value = nil
            state.sharedLoad = nil
        }
    }

    /// The cached value, if there is one, no file it was read from needs checking first, and
    /// every remote source of signals vouches for it.
    @inlinable
    var cachedValue: Value? {
        guard !freshness.needsCheck else { return nil }
        if feeds.needsCheck, feeds.hasChanged() {
            invalidate()
            return nil
        }
        return state.withLock { $0.value }
    }

    /// Returns the cached value, or joins or starts the one shared load of the base store.
    @usableFromInline
    func load(from base: @escaping @Sendable () async throws -> Value) async throws -> Value {
        // A file's directory is not watched, so its changes may not have been signalled.
        if freshness.needsCheck, await freshness.hasChanged() {
            invalidate()
        }
        // A remote source of signals lost (or may have lost) some: what is held may be stale.
        if feeds.needsCheck, feeds.hasChanged() {
            invalidate()
        }
        let step: LoadStep = state.withLock { state in
            if let value = state.value {
                return .hit(value)
            }
            if let shared = state.sharedLoad {
                return .wait(shared.task)
            }
            let id = state.nextLoadID
            let generation = state.generation
            state.nextLoadID += 1
            let task = Task {
                do {
                    let value = try await base()
                    self.finishLoad(id: id, generation: generation, loaded: value)
                    return value
                } catch {
                    self.finishLoad(id: id, generation: generation, loaded: nil)
                    throw error
                }
            }
            state.sharedLoad = SharedLoad(id: id, task: task)
            return .wait(task)
        }
        switch step {
        case .hit(let value):
            return value
        case .wait(let task):
            return try await task.value
        }
    }

    private func finishLoad(id: UInt64, generation: UInt64, loaded: Value?) {
        state.withLock { state in
            if state.sharedLoad?.id == id {
                state.sharedLoad = nil
            }
            if let value = loaded,
                state.generation == generation,
                state.mutationsInFlight == 0
            {
                state.value = value
            }
        }
    }

    /// Runs an update of the base store and caches what it stored.
    ///
    /// `body` is the caller's code: it runs with the caller's writer, not this cache's, so a
    /// stream or a write it starts, also from a task it starts, is not taken for the cache's own.
    @usableFromInline
    nonisolated(nonsending) func update(
        _ body: (_ value: inout Value?) async throws -> Void,
        of base: @escaping ValueStore<Void, Value>.Update
    ) async throws -> Value? {
        let caller = ChangeOrigin.writer
        return try await mutate {
            try await base(()) { value in
                try await ChangeOrigin.$writer.withValue(caller) { try await body(&value) }
            }
        }
    }

    /// Runs a mutation of the base store and caches what it stored (`nil`: nothing).
    @usableFromInline
    nonisolated(nonsending) func mutate(
        _ operation: nonisolated(nonsending) () async throws -> Value?
    ) async throws -> Value? {
        let generation = state.withLock { state in
            state.generation += 1
            state.mutationsInFlight += 1
            state.value = nil
            state.sharedLoad = nil
            return state.generation
        }
        let result: Result<Value?, any Error>
        do {
            // The watch skips the signals of writes made under this number.
            let stored = try await ChangeOrigin.$writer.withValue(writer) { try await operation() }
            result = .success(stored)
        } catch {
            result = .failure(error)
        }
        state.withLock { state in
            state.mutationsInFlight -= 1
            if case .success(let stored) = result,
                state.mutationsInFlight == 0,
                state.generation == generation
            {
                state.value = stored
            }
            // Loads that started during the mutation may have read the old value.
            state.generation += 1
            state.sharedLoad = nil
        }
        return try result.get()
    }
}
