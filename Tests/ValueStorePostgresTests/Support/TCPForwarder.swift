#if PostgreSQL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import PostgresNIO
import Synchronization

/// A TCP forwarder the tests own, between a client and the `pg_virtualenv` server, that fails on
/// demand as a network does: it refuses, resets or silently drops connections, or loses the
/// answer to a commit, with no root.
///
/// ```swift
/// let forwarder = try TCPForwarder.toServer()
/// defer { forwarder.stop() }
/// try await PostgresServer.withClient(configuration: forwarder.configuration()) { client in
///     forwarder.mode = .blackhole  // the connection hangs: nothing arrives, nothing closes
/// }
/// ```
///
/// It listens on `127.0.0.1` on an ephemeral port and forwards each connection to the server on
/// a thread of its own (plain POSIX sockets), checking the mode every few milliseconds. It reads
/// the server's side as PostgreSQL messages (``Traffic/postgres``), or passes any protocol's bytes
/// as they come (``Traffic/bytes``, between the chaos test's devices and sync servers over HTTP):
///
/// ```swift
/// let forwarder = try TCPForwarder(to: .tcp(host: "127.0.0.1", port: serverPort), carrying: .bytes)
/// forwarder.mode = .dropAnswers  // the server gets the request; its answer is lost
/// ```
final class TCPForwarder: Sendable {
    /// What the forwarder does with connections, switchable at any moment.
    enum Mode: Equatable, Sendable {
        /// Forwards both ways.
        case pass
        /// Refuses new connections: the port is closed (a connection that slips in while it
        /// closes is reset at once). Open connections keep forwarding.
        case refuse
        /// Resets every open connection (RST, `SO_LINGER` 0) and every new one at once.
        case reset
        /// Stops forwarding both ways without closing either side: a partition, a crashed host,
        /// a moved virtual IP. New connections are accepted and hang too.
        case blackhole
        /// Forwards the client's requests, and drops the server's answer to each request that
        /// leaves the session outside a transaction (``Traffic/postgres`` only) (a `COMMIT`, or a statement run on its own),
        /// then resets the connection: the server applied the request, and the client never
        /// hears of it, as when a network fails between a commit and its acknowledgement.
        /// Answers inside a transaction pass, so a transaction runs up to its commit; so does a
        /// new connection's start-up, up to its first `ReadyForQuery`.
        case dropResponses
        /// Forwards the client's requests, and drops whatever the server sends back, any
        /// protocol: at the first bytes of an answer it resets the connection. The server had the
        /// request and answered it; the client never hears of it (an HTTP push applied, its
        /// answer lost). Counted in ``droppedAnswers``.
        case dropAnswers
    }

    /// What the connections carry, which says how the server's side is read.
    enum Traffic: Sendable {
        /// PostgreSQL's protocol: the server's side is cut into messages, so that notifications
        /// (``dropsNotifications``) or the answers to commits (``Mode/dropResponses``) can be
        /// dropped; a partial message waits for the rest.
        case postgres
        /// Any protocol (HTTP): bytes pass as they come, both ways. Every mode but
        /// ``Mode/dropResponses`` applies; notifications are PostgreSQL's, never dropped here.
        case bytes
    }

    /// Where the forwarder sends connections.
    enum Upstream: Sendable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    /// What the accepting and forwarding threads share with the tests' switches.
    struct State {
        var mode = Mode.pass
        /// One more each time open connections are to be reset.
        var resets = 0
        /// One more each time open connections are to stop forwarding for good.
        var blackholes = 0
        var stopped = false
        /// Whether the port is open now, as the accepting thread left it.
        var listening = true
        var open = 0
        var accepted = 0
        var droppedAnswers = 0
        /// Whether the server's notifications are dropped on the way to the client.
        var dropsNotifications = false
        /// Where new connections go.
        var upstream: Upstream
    }

    let state: Mutex<State>
    /// What its connections carry.
    let traffic: Traffic
    /// The port it listens on, on `127.0.0.1`.
    let port: Int
    /// The listening socket, owned by the accepting thread once it starts (closed and made again
    /// while refusing).
    private let initialSocket: Int32

    /// A forwarder to `upstream` of connections carrying `traffic`, listening at once.
    init(to upstream: Upstream, carrying traffic: Traffic = .postgres) throws {
        state = Mutex(State(upstream: upstream))
        self.traffic = traffic
        (initialSocket, port) = try Self.listeningSocket(port: 0)
        let socket = initialSocket
        Thread.detachNewThread { [self] in acceptLoop(socket) }
    }

    /// A forwarder to the `pg_virtualenv` server, from `PGHOST` and `PGPORT`: a host, or a
    /// directory holding the server's unix socket.
    static func toServer(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> TCPForwarder {
        let configuration = try PostgresServer.configuration(environment: environment)
        if let host = configuration.host, let port = configuration.port {
            if host.hasPrefix("/") {
                return try TCPForwarder(to: .unix(path: "\(host)/.s.PGSQL.\(port)"))
            }
            return try TCPForwarder(to: .tcp(host: host, port: port))
        }
        return try TCPForwarder(to: .unix(path: configuration.unixSocketPath ?? ""))
    }

    /// The server's client configuration, connecting through the forwarder.
    /// - Parameter maximumConnections: The pool's size.
    /// - Returns: The configuration of a client that connects through the forwarder.
    /// - Throws: `PostgresServer.Missing` when the server's variables are not set.
    func configuration(maximumConnections: Int = 20) throws -> PostgresClient.Configuration {
        try PostgresServer.configuration(throughLocalPort: port, maximumConnections: maximumConnections)
    }

    /// What it does now; setting ``Mode/reset`` resets every open connection. Setting it
    /// returns once the port is closed (``Mode/refuse``) or open (any other mode).
    /// ``Mode/dropResponses`` needs ``Traffic/postgres``.
    var mode: Mode {
        get { state.withLock { $0.mode } }
        set {
            precondition(newValue != .dropResponses || traffic == .postgres, "dropResponses reads PostgreSQL's answers")
            state.withLock { state in
                state.mode = newValue
                if newValue == .reset {
                    state.resets += 1
                }
            }
            // The accepting thread closes or opens the port within a tick.
            for _ in 0..<1_000 where state.withLock({ $0.listening == ($0.mode != .refuse) }) == false {
                usleep(1_000)
            }
        }
    }

    /// Whether the server's notifications (`NotificationResponse` messages) are dropped on the
    /// way to the client, as a transaction-mode pooler loses them; everything else passes
    /// (``Traffic/postgres`` only).
    var dropsNotifications: Bool {
        get { state.withLock { $0.dropsNotifications } }
        set { state.withLock { $0.dropsNotifications = newValue } }
    }

    /// Where new connections go: setting it moves the "virtual IP" to another server, while
    /// open connections keep forwarding to the old one.
    var upstream: Upstream {
        get { state.withLock { $0.upstream } }
        set { state.withLock { $0.upstream = newValue } }
    }

    /// Resets every open connection (RST) and keeps the mode.
    func resetConnections() {
        state.withLock { $0.resets += 1 }
    }

    /// Stops forwarding on every open connection for good, without closing it, while new
    /// connections pass: a host that crashed, or a virtual IP that moved to another machine.
    func blackholeOpenConnections() {
        state.withLock { $0.blackholes += 1 }
    }

    /// How many connections are open through it now.
    var openConnections: Int { state.withLock { $0.open } }

    /// How many connections it accepted, ever.
    var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// How many answers it dropped in ``Mode/dropResponses`` or ``Mode/dropAnswers``, ever: requests the server finished
    /// and the client never heard of.
    var droppedAnswers: Int { state.withLock { $0.droppedAnswers } }

    /// Runs `body` with a forwarder to the server, stopped after it.
    static func withForwarder<Result: Sendable>(
        _ body: @Sendable (TCPForwarder) async throws -> Result
    ) async throws -> Result {
        let forwarder = try toServer()
        defer { forwarder.stop() }
        return try await body(forwarder)
    }

    /// A single connection to the server through the forwarder, outside any pool.
    func connect() async throws -> PostgresConnection {
        let server = try PostgresServer.configuration()
        var configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: port, username: server.username, password: server.password,
            database: server.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        return try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "forwarder-tests"))
    }

    /// Stops listening and resets every open connection. Call it: the threads keep the
    /// forwarder alive until then.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.resets += 1
        }
    }
}
#endif
