#if PostgreSQL
import PostgresNIO
import Synchronization

/// Each connection's own server process, for `pg_cancel_backend`: asked once per connection,
/// and known only where the store can be sure the process is the connection's alone.
///
/// A pooler in transaction mode runs each transaction of a client connection on whichever
/// server connection is free, so the process that answered `pg_backend_pid()` is soon another
/// client's, and cancelling it would cancel their statement, never this one. The protocol's
/// cancel request, which a pooler routes, needs the connection's backend key, which
/// postgres-nio does not publish. So the store asks the server which address and port it sees
/// the connection come from: when they are the connection's own local address and port, nothing
/// sits in between and the process is the connection's for its life. Otherwise (a pooler, a
/// proxy, address translation, a Unix socket) the pid is `nil`, and a statement the store must
/// stop is stopped by closing its connection.
final class PostgresBackends: Sendable {
    static let shared = PostgresBackends()

    private struct Entry {
        weak var connection: PostgresConnection?
        /// The process, or `nil` when it may not be the connection's own.
        let pid: Int32?
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// The connection's own server process, or `nil` when the store cannot be sure it is.
    func pid(of connection: PostgresConnection) async throws -> Int32? {
        let id = ObjectIdentifier(connection)
        if let entry = entries.withLock({ $0[id] }), entry.connection === connection {
            return entry.pid
        }
        let query: PostgresQuery = "SELECT pg_backend_pid(), host(inet_client_addr()), inet_client_port()"
        var seen: (pid: Int32, address: String?, port: Int32?)?
        for try await row in try await connection.query(query, logger: PostgresValueTable.logger) {
            seen = try row.decode((Int32, String?, Int32?).self)
        }
        var pid: Int32?
        if let seen, let local = Self.localAddress(of: connection), let address = seen.address,
            let port = seen.port, Int(port) == local.port, Self.unmapped(address) == Self.unmapped(local.address)
        {
            pid = seen.pid
        }
        entries.withLock { entries in
            if entries.count >= 64 {
                entries = entries.filter { $0.value.connection != nil }
            }
            entries[id] = Entry(connection: connection, pid: pid)
        }
        return pid
    }

    /// The connection's local IP address and port; `nil` for a Unix socket, or if a release of
    /// postgres-nio moves its channel, which it keeps internal (read by reflection).
    private static func localAddress(of connection: PostgresConnection) -> (address: String, port: Int)? {
        guard let channel = Mirror(reflecting: connection).descendant("channel") as? any Channel,
            let local = channel.localAddress, let address = local.ipAddress, let port = local.port
        else { return nil }
        return (address, port)
    }

    /// An IPv4 address as a server listening on IPv6 may show it (`::ffff:127.0.0.1`), unmapped.
    private static func unmapped(_ address: String) -> String {
        address.hasPrefix("::ffff:") ? String(address.dropFirst(7)) : address
    }
}
#endif
