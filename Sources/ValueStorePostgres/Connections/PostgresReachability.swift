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
final class PostgresReachability: Sendable {
    static let shared = PostgresReachability()

    /// How long a call waits for a connection while none is known to be open.
    static let shortWait = Duration.seconds(2)

    private let connected = Mutex<Set<ObjectIdentifier>>([])

    /// A connection of `client` was leased and used: the server is reached.
    func reached(_ client: PostgresClient) {
        let id = ObjectIdentifier(client)
        // Read first: every operation says so, and most find it known already.
        guard !connected.withLock({ $0.contains(id) }) else { return }
        connected.withLock { _ = $0.insert(id) }
    }

    /// A connection of `client` was lost, or none came in time while none was held: until one
    /// is leased again, nothing is known to be open.
    func lost(_ client: PostgresClient) {
        connected.withLock { _ = $0.remove(ObjectIdentifier(client)) }
    }

    /// Whether a connection of `client` is known to be open; `false` before the first.
    func isReached(_ client: PostgresClient) -> Bool {
        connected.withLock { $0.contains(ObjectIdentifier(client)) }
    }

    /// How long a call through `client` waits for a connection: `timeout`, or at most
    /// ``shortWait`` while no connection is known to be open.
    func wait(for client: PostgresClient, timeout: Duration) -> Duration {
        isReached(client) ? timeout : min(timeout, Self.shortWait)
    }
}
#endif
