#if Configuration
public import Configuration
import Foundation
import Synchronization
import ValueStore

extension ValueStoreConfigProvider: ConfigProvider {
    /// The value of `key` in the last good snapshot, without suspending.
    ///
    /// ```swift
    /// let result = try flags.value(forKey: ["checkout", "enabled"], type: .bool)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - type: The type the caller asks for.
    /// - Returns: The value, or a result whose value is `nil` when the key is absent.
    /// - Throws: The snapshot's error for a value of another type.
    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let snapshot = storage.withLock { $0.snapshot }
        return try snapshot.value(forKey: key, type: type)
    }

    /// Loads the store, takes in what it holds, and returns the value of `key`.
    ///
    /// ```swift
    /// let result = try await flags.fetchValue(forKey: ["checkout", "enabled"], type: .bool)
    /// ```
    ///
    /// Watchers of keys whose value changed are notified, as when ``run()`` sees a change.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - type: The type the caller asks for.
    /// - Returns: The value, or a result whose value is `nil` when the key is absent.
    /// - Throws: The store's failure, absence when `allowMissing` is `false`, or `Snapshot`'s
    ///   parse error; the last good snapshot is kept.
    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        let ticket = ticket()
        let store = store
        let state = await StoredState { try await store.load() }
        if let error = takeIn(state, ticket: ticket) {
            throw error
        }
        return try value(forKey: key, type: type)
    }

    /// Yields the value of `key` now, then whenever a new snapshot changes it.
    ///
    /// ```swift
    /// try await flags.watchValue(forKey: ["checkout", "enabled"], type: .bool) { updates in
    ///     for await update in updates { print(try update.get().value as Any) }
    /// }
    /// ```
    ///
    /// Only the newest update is buffered: a slow handler skips to the latest value.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - type: The type the caller asks for.
    ///   - updatesHandler: Consumes the updates; the watch ends when it returns.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: (
            _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
        ) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<Result<LookupResult, any Error>>
            .makeStream(bufferingPolicy: .bufferingNewest(1))
        // The current value is yielded in the lock, so that a change told right after cannot come
        // before it; nobody iterates the stream yet, so the yield wakes no task.
        let id = storage.withLock { storage in
            let id = storage.nextWatcher
            storage.nextWatcher += 1
            storage.valueWatchers[key, default: [:]][id] = ValueWatcher(type: type, continuation: continuation)
            continuation.yield(Result { try storage.snapshot.value(forKey: key, type: type) })
            return id
        }
        defer {
            storage.withLock { storage in
                storage.valueWatchers[key]?[id] = nil
                if storage.valueWatchers[key]?.isEmpty == true {
                    storage.valueWatchers[key] = nil
                }
            }
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }

    /// The last good snapshot, without suspending.
    ///
    /// ```swift
    /// let snapshot = flags.snapshot()
    /// ```
    ///
    /// - Returns: A snapshot that never changes.
    public func snapshot() -> any ConfigSnapshot {
        storage.withLock { $0.snapshot }
    }

    /// Yields the snapshot now, then each new snapshot.
    ///
    /// ```swift
    /// try await flags.watchSnapshot { snapshots in
    ///     for await snapshot in snapshots { apply(snapshot) }
    /// }
    /// ```
    ///
    /// - Parameter updatesHandler: Consumes the snapshots; the watch ends when it returns.
    /// - Returns: What `updatesHandler` returns.
    /// - Throws: What `updatesHandler` throws.
    public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<any ConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The current snapshot is yielded in the lock, as in `watchValue`.
        let id = storage.withLock { storage in
            continuation.yield(storage.snapshot)
            return storage.snapshotWatchers.add(continuation)
        }
        defer {
            storage.withLock { $0.snapshotWatchers.remove(id) }
            continuation.finish()
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream))
    }
}
#endif
