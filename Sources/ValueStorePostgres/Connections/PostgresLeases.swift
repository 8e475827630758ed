#if PostgreSQL
import PostgresNIO
import Synchronization

/// The connections the store borrows from each client's pool: how many its operations hold now
/// (what a busy pool's error says), and which connections it has borrowed and whether it holds
/// them, so that the ones lying idle in the pool can be closed once they are likely dead.
///
/// postgres-nio's pool has no way to test or close its idle connections, and lends one that died
/// without a word (a partition, a crashed host, a moved virtual IP) as if it were alive: the
/// statement sent on it waits for the whole `operationTimeout`. When a listening connection is
/// proved dead, the pool's other connections most likely died with it, so the listener calls
/// ``closeIdle(of:)`` before its streams reload: every connection of the client this process
/// borrowed and does not hold now is closed, the pool drops it, and the reloads get new ones.
/// A connection the app borrowed itself from the same client and holds at that moment is closed
/// too, when the store borrowed it before. The pool may also hold idle connections the store
/// never borrowed, so from then on each connection must answer a round trip before the store
/// sends anything on it (``needsProof(_:of:)``).
///
/// A client is known by its use's ``PostgresClientUse/id``, never by its address, which a later
/// client may get: what is kept of a client is forgotten when its last use ends (``forget(_:)``).
final class PostgresLeases: Sendable {
    static let shared = PostgresLeases()

    private struct Borrowed {
        weak var connection: PostgresConnection?
        /// How many of this process's leases hold it now.
        var held: Int
    }

    private struct State {
        /// How many connections value-table operations hold, by client.
        var operations: [UInt64: Int] = [:]
        /// Every connection borrowed and not yet released by the pool, by client and connection.
        var borrowed: [UInt64: [ObjectIdentifier: Borrowed]] = [:]
        /// For each client whose listening connection was proved dead, the connections that
        /// answered a round trip since.
        var vouched: [UInt64: Set<ObjectIdentifier>] = [:]
    }

    private let state = Mutex(State())

    /// Borrows a connection of the used client for `body`, keeping track of it.
    func withConnection<Result: Sendable>(
        of client: PostgresClientUse,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.client.withConnection { connection in
            hold(connection, of: client, by: 1)
            defer { hold(connection, of: client, by: -1) }
            return try await body(connection)
        }
    }

    private func hold(_ connection: PostgresConnection, of client: PostgresClientUse, by delta: Int) {
        let id = ObjectIdentifier(connection)
        state.withLock { state in
            var borrowed = state.borrowed[client.id, default: [:]]
            if let known = borrowed[id], known.connection === connection {
                borrowed[id]!.held += delta
            } else {
                // A new connection (or a new one at a freed one's address): forget the ones the
                // pool let go of, so the table stays as small as the pool.
                borrowed = borrowed.filter { $0.value.connection != nil }
                borrowed[id] = Borrowed(connection: connection, held: delta)
            }
            state.borrowed[client.id] = borrowed
        }
    }

    /// Closes every connection of the client this process borrowed and holds no more: the pool
    /// drops each, and makes new ones as they are asked for. Returns how many it closed.
    ///
    /// From then on, each connection of the client must answer a round trip
    /// (``answers(_:within:)``) before the store sends anything on it
    /// (``needsProof(_:of:)``): the pool may hold idle connections the store never borrowed,
    /// which died in the same partition.
    @discardableResult
    func closeIdle(of client: PostgresClientUse) async -> Int {
        let idle = state.withLock { state in
            state.vouched[client.id] = []
            return state.borrowed[client.id, default: [:]].values.compactMap { borrowed in
                borrowed.held == 0 ? borrowed.connection : nil
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for connection in idle {
                group.addTask { try? await connection.close() }
            }
        }
        return idle.count
    }

    /// Whether `connection` must answer a round trip before anything is sent on it: the client's
    /// listening connection was proved dead, and it has not answered since.
    func needsProof(_ connection: PostgresConnection, of client: PostgresClientUse) -> Bool {
        state.withLock { state in
            guard let vouched = state.vouched[client.id] else { return false }
            return !vouched.contains(ObjectIdentifier(connection))
        }
    }

    /// Whether every connection of the client must answer a round trip before it is used, until
    /// it has: since ``closeIdle(of:)``, when its listening connection was proved dead.
    func provesConnections(of client: PostgresClientUse) -> Bool {
        state.withLock { $0.vouched[client.id] != nil }
    }

    /// `connection` answered a round trip since its client's listening connection was proved dead.
    func vouch(for connection: PostgresConnection, of client: PostgresClientUse) {
        state.withLock { state in
            // Forgetting them all only costs each a round trip more.
            if state.vouched[client.id]?.count ?? 0 >= 256 {
                state.vouched[client.id] = []
            }
            state.vouched[client.id]?.insert(ObjectIdentifier(connection))
        }
    }

    /// Whether `connection` answers `SELECT 1` within `bound`; one that does not is closed.
    static func answers(_ connection: PostgresConnection, within bound: Duration) async -> Bool {
        let closing = connection.eventLoop.scheduleTask(in: TimeAmount(bound)) {
            () -> EventLoopFuture<Void> in connection.close()
        }
        defer { closing.cancel() }
        do {
            for try await _ in try await connection.query("SELECT 1", logger: PostgresValueTable.logger) {}
            return true
        } catch {
            try? await connection.close()
            return false
        }
    }

    /// Counts one more (`delta` 1) or one fewer (-1) connection held by an operation of the
    /// client.
    func add(_ delta: Int, for client: PostgresClientUse) {
        state.withLock { state in
            let count = state.operations[client.id, default: 0] + delta
            state.operations[client.id] = count == 0 ? nil : count
        }
    }

    /// How many connections operations of the client hold now.
    func count(for client: PostgresClientUse) -> Int {
        state.withLock { $0.operations[client.id] ?? 0 }
    }

    /// The client's last use ended: its connections, and whether they must prove themselves,
    /// are forgotten, so a client that gets its address begins with nothing of it.
    func forget(_ id: UInt64) {
        state.withLock { state in
            state.operations[id] = nil
            state.borrowed[id] = nil
            state.vouched[id] = nil
        }
    }

    /// Whether anything is kept under `id`, for tests: nothing once its last use ended.
    func knows(_ id: UInt64) -> Bool {
        state.withLock { $0.operations[id] != nil || $0.borrowed[id] != nil || $0.vouched[id] != nil }
    }
}
#endif
