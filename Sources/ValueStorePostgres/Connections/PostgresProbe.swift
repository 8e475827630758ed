#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization

/// One connection made beside a client's pool, to learn what the pool does not say while a call
/// waits for it: whether the server refuses the connection, refuses the login, or accepts both
/// (so the wait is a busy pool).
///
/// A call starts a probe once it has waited ``delay`` with no connection known to be open, so a
/// pool that lends one at once is never probed. The probe connects with the client's own
/// configuration (``PostgresPool/configuration(of:)``), within ``bound``, and closes at once. Its
/// outcome is trusted for ``freshness``, so calls in a row during an outage share one probe.
final class PostgresProbe: Sendable {
    static let shared = PostgresProbe()

    /// How long a call waits for a connection before it probes.
    static let delay = Duration.milliseconds(100)
    /// How long a probe may take to connect.
    static let bound = TimeAmount.seconds(2)
    /// How long an outcome is trusted.
    static let freshness = Duration.seconds(1)

    /// How a probe ended.
    enum Outcome: Sendable {
        /// The server accepted the connection and the login.
        case connected
        /// Nothing listens at the address (`ECONNREFUSED` for every address tried).
        case refused
        /// The server refused the login (SQLSTATE `28P01`, `28000`) or knows no such database
        /// (`3D000`).
        case loginRefused(PostgresFailure)
        /// Anything else: a timeout, a name that does not resolve, a server out of connections.
        case failed
    }

    private struct Entry {
        var probing: Bool
        var outcome: Outcome?
        var at: ContinuousClock.Instant
    }

    /// By the client use's ``PostgresClientUse/id``: a client at a dropped one's address never
    /// finds its outcome.
    private let entries = Mutex<[UInt64: Entry]>([:])

    /// The outcome of a probe of the client that ended within ``freshness``.
    func outcome(of client: PostgresClientUse) -> Outcome? {
        entries.withLock { entries in
            guard let entry = entries[client.id], ContinuousClock.now - entry.at < Self.freshness
            else { return nil }
            return entry.outcome
        }
    }

    /// Starts a probe of the client, unless one runs or a fresh outcome is known.
    func start(_ client: PostgresClientUse) {
        let id = client.id
        let now = ContinuousClock.now
        let begins = entries.withLock { entries in
            entries = entries.filter { $0.value.probing || now - $0.value.at < .seconds(10) }
            if let entry = entries[id], entry.probing || now - entry.at < Self.freshness {
                return false
            }
            entries[id] = Entry(probing: true, outcome: nil, at: now)
            return true
        }
        guard begins else { return }
        // The task holds the use: its outcome is recorded before the use can end and forget it.
        Task {
            let outcome = await Self.probe(client.client)
            entries.withLock { $0[id] = Entry(probing: false, outcome: outcome, at: .now) }
        }
    }

    /// The client's last use ended: its outcomes go.
    func forget(_ id: UInt64) {
        entries.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Whether a probe runs or an outcome is known under `id`, for tests: neither once its last
    /// use ended (and its probe returned).
    func knows(_ id: UInt64) -> Bool {
        entries.withLock { $0[id] != nil }
    }

    private static func probe(_ client: PostgresClient) async -> Outcome {
        guard let configuration = PostgresPool.configuration(of: client).flatMap({ try? configuration(from: $0) })
        else { return .failed }
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: PostgresPool.eventLoopGroup(of: client).any(), configuration: configuration, id: 0,
                logger: PostgresValueTable.logger)
        } catch let error as PSQLError {
            return outcome(of: error)
        } catch {
            return .failed
        }
        try? await connection.close()
        return .connected
    }

    /// What a failed connection attempt says about the server.
    static func outcome(of error: PSQLError) -> Outcome {
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            guard ["28P01", "28000", "3D000"].contains(state) else { return .failed }
            return .loginRefused(
                PostgresFailure(sqlState: state, message: error.serverInfo?[.message] ?? "\(error.code)"))
        case .connectionError:
            return error.underlying.map(isRefusal) == true ? .refused : .failed
        default:
            return .failed
        }
    }

    /// Whether `error` is a refused TCP connection, alone or for every address of a host name.
    private static func isRefusal(_ error: any Error) -> Bool {
        if let error = error as? IOError {
            return error.errnoCode == ECONNREFUSED
        }
        if let error = error as? NIOConnectionError {
            return !error.connectionErrors.isEmpty && error.connectionErrors.allSatisfy { isRefusal($0.error) }
        }
        return false
    }

    /// A connection's configuration with the client's endpoint, credentials and TLS settings.
    private static func configuration(
        from client: PostgresClient.Configuration
    ) throws -> PostgresConnection.Configuration? {
        // The client keeps its TLS choice in an internal enum: `.disable`, `.prefer(settings)` or
        // `.require(settings)`.
        var tls = PostgresConnection.Configuration.TLS.disable
        if let base = Mirror(reflecting: client.tls).descendant("base"),
            let choice = Mirror(reflecting: base).children.first,
            let settings = choice.value as? TLSConfiguration
        {
            let context = try NIOSSLContext(configuration: settings)
            tls = choice.label == "require" ? .require(context) : .prefer(context)
        }
        var configuration: PostgresConnection.Configuration
        if let path = client.unixSocketPath {
            configuration = PostgresConnection.Configuration(
                unixSocketPath: path, username: client.username, password: client.password,
                database: client.database)
        } else if let host = client.host, let port = client.port {
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: client.username, password: client.password,
                database: client.database, tls: tls)
        } else {
            return nil
        }
        configuration.options.connectTimeout = bound
        configuration.options.tlsServerName = client.options.tlsServerName
        configuration.options.requireBackendKeyData = client.options.requireBackendKeyData
        configuration.options.additionalStartupParameters = client.options.additionalStartupParameters
        return configuration
    }
}
#endif
