#if Configuration
public import ServiceLifecycle
import ValueStore

extension ValueStoreConfigProvider: Service {
    /// Follows the store's changes until the task is cancelled or the service group shuts down
    /// gracefully: each new value is parsed and swapped in, and the watchers of the keys whose
    /// value changed are notified.
    ///
    /// ```swift
    /// try await ServiceGroup(services: [flags], logger: logger).run()
    /// ```
    ///
    /// The first state is the store's state when it starts, so a change made between the
    /// initializer and `run()` is not missed. A failed load or a document that does not parse
    /// keeps the last good snapshot, logs a warning and counts `valuestore.config.errors`;
    /// following goes on.
    public func run() async throws {
        for await state in store.changes().cancelOnGracefulShutdown() {
            takeIn(state, ticket: ticket())
        }
    }
}
#endif
