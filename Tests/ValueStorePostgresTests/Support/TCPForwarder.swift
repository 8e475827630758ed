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
/// a thread of its own (plain POSIX sockets), checking the mode every few milliseconds.
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
        /// leaves the session outside a transaction (a `COMMIT`, or a statement run on its own),
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

    /// Where the forwarder sends connections.
    enum Upstream: Sendable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    private struct State {
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

    private let state: Mutex<State>
    /// The port it listens on, on `127.0.0.1`.
    let port: Int
    /// The listening socket, owned by the accepting thread once it starts (closed and made again
    /// while refusing).
    private let initialSocket: Int32

    /// A forwarder to `upstream`, listening at once.
    init(to upstream: Upstream) throws {
        state = Mutex(State(upstream: upstream))
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
    var mode: Mode {
        get { state.withLock { $0.mode } }
        set {
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
    /// way to the client, as a transaction-mode pooler loses them; everything else passes.
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

    // MARK: - Sockets

    private static let tick: Int32 = 10  // milliseconds between looks at the mode

    private static func listeningSocket(port: Int) throws -> (Int32, Int) {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw failure("socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let error = failure("bind/listen")
            close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func failure(_ call: String) -> any Error {
        TCPForwarderError(description: "\(call) failed: \(String(cString: strerror(errno)))")
    }

    /// Accepts until stopped; closes the port while refusing and opens it again after.
    private func acceptLoop(_ initial: Int32) {
        var listener: Int32? = initial
        while true {
            let (mode, stopped) = state.withLock { ($0.mode, $0.stopped) }
            if stopped {
                if let listener { close(listener) }
                return
            }
            if mode == .refuse {
                if let open = listener {
                    close(open)
                    listener = nil
                }
                state.withLock { $0.listening = false }
                usleep(UInt32(Self.tick) * 1000)
                continue
            }
            guard let open = listener else {
                // The same port again: SO_REUSEADDR lets it bind while old connections linger.
                listener = try? Self.listeningSocket(port: port).0
                if listener == nil {
                    usleep(UInt32(Self.tick) * 1000)
                } else {
                    state.withLock { $0.listening = true }
                }
                continue
            }
            var poller = pollfd(fd: open, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Self.tick) > 0 else { continue }
            let client = accept(open, nil, nil)
            guard client >= 0 else { continue }
            let (now, start) = state.withLock { state in
                state.accepted += 1
                return (state.mode, Generations(resets: state.resets, blackholes: state.blackholes))
            }
            if now == .refuse || now == .reset {
                Self.closeWithReset(client)
                continue
            }
            state.withLock { $0.open += 1 }
            Thread.detachNewThread { [self] in
                forward(client, start: start)
                state.withLock { $0.open -= 1 }
            }
        }
    }

    /// The reset and blackhole counts a connection started under.
    private struct Generations: Equatable {
        var resets: Int
        var blackholes: Int
    }

    /// Forwards one connection until either side closes it or it is reset.
    private func forward(_ client: Int32, start: Generations) {
        guard let server = connectUpstream() else {
            Self.closeWithReset(client)
            return
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fromServer = ServerMessages()
        while true {
            let (mode, resets, blackholes) = state.withLock { ($0.mode, $0.resets, $0.blackholes) }
            if resets != start.resets {
                Self.closeWithReset(client)
                Self.closeWithReset(server)
                return
            }
            if mode == .blackhole || blackholes != start.blackholes {
                usleep(UInt32(Self.tick) * 1000)
                continue
            }
            var pollers = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: server, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&pollers, 2, Self.tick) > 0 else { continue }
            // Look again: a blackhole or a reset that came while waiting wins over the data.
            let after = state.withLock { ($0.mode, Generations(resets: $0.resets, blackholes: $0.blackholes)) }
            if after.0 == .blackhole || after.1 != start { continue }
            for (index, poller) in pollers.enumerated() where poller.revents != 0 {
                let (from, to) = index == 0 ? (client, server) : (server, client)
                let count = read(from, &buffer, buffer.count)
                guard count > 0 else {
                    close(client)
                    close(server)
                    return
                }
                var bytes = Array(buffer[..<count])
                if from == server && after.0 == .dropAnswers {
                    state.withLock { $0.droppedAnswers += 1 }
                    Self.closeWithReset(client)
                    close(server)
                    return
                }
                if from == server {
                    let answer = fromServer.pass(
                        bytes, droppingNotifications: dropsNotifications,
                        droppingCommittedAnswers: after.0 == .dropResponses)
                    guard !answer.dropped else {
                        // The server finished the request: the client never hears of it.
                        state.withLock { $0.droppedAnswers += 1 }
                        Self.closeWithReset(client)
                        close(server)
                        return
                    }
                    bytes = answer.bytes
                }
                guard Self.writeAll(to, bytes, bytes.count) else {
                    close(client)
                    close(server)
                    return
                }
            }
        }
    }

    private func connectUpstream() -> Int32? {
        switch upstream {
        case .unix(let path):
            let fd = socket(AF_UNIX, streamSocket, 0)
            guard fd >= 0 else { return nil }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { bytes in
                for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() {
                    bytes[index] = byte
                }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                return nil
            }
            return fd
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_socktype = streamSocket
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0 else { return nil }
            defer { freeaddrinfo(list) }
            var entry = list
            while let info = entry {
                let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
                if fd >= 0 {
                    if systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                        var yes: Int32 = 1
                        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                        return fd
                    }
                    close(fd)
                }
                entry = info.pointee.ai_next
            }
            return nil
        }
    }

    private static func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var written = 0
        while written < count {
            // `send` without SIGPIPE: the peer may have been reset, which must not kill the tests.
            let result = buffer.withUnsafeBytes { send(fd, $0.baseAddress! + written, count - written, noSignal) }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    /// Closes with an RST instead of a FIN: the peer's next read or write fails at once.
    private static func closeWithReset(_ fd: Int32) {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }
}

#if canImport(Glibc)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let systemConnect = Glibc.connect
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let streamSocket = SOCK_STREAM
private let systemConnect = Darwin.connect
private let noSignal: Int32 = 0  // no MSG_NOSIGNAL; these tests run under Debian's pg_virtualenv
#endif

/// The server's side of one connection, cut into messages (a type byte, then a 32-bit length
/// that counts itself), so that notifications, or a whole answer, can be dropped. Without TLS,
/// every message the server sends has this shape, from the first.
private struct ServerMessages {
    private var pending: [UInt8] = []
    /// The answer so far to the request in progress, held back while answers to commits are
    /// dropped: it goes on, or is dropped, at its `ReadyForQuery`.
    private var answer: [UInt8] = []
    /// Whether the connection's start-up is over (its first `ReadyForQuery` went by).
    private var isStarted = false

    /// The bytes to send on: whole messages, less notifications when `droppingNotifications`; a
    /// partial message waits for the rest. When `droppingCommittedAnswers`, each answer is held
    /// until its `ReadyForQuery` (`Z`), whose status byte says where the session stands: in a
    /// transaction (`T`, `E`) the answer goes on; outside one (`I`) the request committed (or
    /// ran on its own), and `dropped` is true: the caller resets the connection. The start-up's
    /// messages always pass.
    mutating func pass(
        _ bytes: [UInt8],
        droppingNotifications: Bool,
        droppingCommittedAnswers: Bool
    ) -> (bytes: [UInt8], dropped: Bool) {
        pending += bytes
        var out: [UInt8] = []
        if !droppingCommittedAnswers {
            out = answer
            answer = []
        }
        var start = 0
        while pending.count - start >= 5 {
            let length = pending[start + 1..<start + 5].reduce(0) { $0 << 8 | Int($1) }
            let end = start + 1 + length
            guard end <= pending.count else { break }
            let type = pending[start]
            let message = pending[start..<end]
            start = end
            if type == UInt8(ascii: "A") {
                // A notification is no answer: it passes, unless notifications are dropped.
                if !droppingNotifications { out += message }
            } else if !droppingCommittedAnswers || !isStarted {
                out += message
                isStarted = isStarted || type == UInt8(ascii: "Z")
            } else if type == UInt8(ascii: "Z") && length == 5 && message.last == UInt8(ascii: "I") {
                return (out, true)
            } else {
                answer += message
                if type == UInt8(ascii: "Z") {
                    out += answer
                    answer = []
                }
            }
        }
        pending.removeFirst(start)
        return (out, false)
    }
}

struct TCPForwarderError: Error, CustomStringConvertible {
    var description: String
}
#endif
