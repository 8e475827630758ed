#if PostgreSQL
import PostgresNIO
import Synchronization

/// What this process last learned about reaching the server through each client: whether one of
/// its connections is known to be open. It bounds the wait for a connection.
///
/// postgres-nio's pool keeps a request queued while it retries connecting, for up to
/// `connectTimeout` (ours) or a minute (its circuit breaker), even when the server refuses at
/// once. While some connection is known to be open, a wait for another is a busy pool, and
/// ``PostgresValueTable/connectTimeout`` bounds it; while none is, it is a server that cannot be
/// reached, and ``shortWait`` bounds it, so an outage costs each call 2 seconds, not 10.
///
/// A client is known by its use's ``PostgresClientUse/id``, never by its address, which a later
/// client may get; what was learned is forgotten when the client's last use ends.
final class PostgresReachability: Sendable {
    static let shared = PostgresReachability()

    /// How long a call waits for a connection while none is known to be open.
    static let shortWait = Duration.seconds(2)

    private let connected = Mutex<Set<UInt64>>([])

    /// A connection of the client was leased and used: the server is reached.
    func reached(_ client: PostgresClientUse) {
        // Read first: every operation says so, and most find it known already.
        guard !isReached(client) else { return }
        connected.withLock { _ = $0.insert(client.id) }
    }

    /// A connection of the client was lost, or none came in time while none was held: until one
    /// is leased again, nothing is known to be open.
    func lost(_ client: PostgresClientUse) {
        connected.withLock { _ = $0.remove(client.id) }
    }

    /// Whether a connection of the client is known to be open; `false` before the first.
    func isReached(_ client: PostgresClientUse) -> Bool {
        connected.withLock { $0.contains(client.id) }
    }

    /// How long a call through the client waits for a connection: `timeout`, or at most
    /// ``shortWait`` while no connection is known to be open.
    func wait(for client: PostgresClientUse, timeout: Duration) -> Duration {
        isReached(client) ? timeout : min(timeout, Self.shortWait)
    }

    /// The client's last use ended: nothing more will be learned under `id`.
    func forget(_ id: UInt64) {
        connected.withLock { _ = $0.remove(id) }
    }

    /// Whether anything is known under `id`, for tests: nothing once its last use ended.
    func knows(_ id: UInt64) -> Bool {
        connected.withLock { $0.contains(id) }
    }
}
#endif
