package import Foundation
import Synchronization
package import ValueStoreSyncHTTP

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1, for the HTTP client's tests and the chaos test's
/// device processes: it answers each request through a handler that takes a ``SyncHTTPRequest``
/// (its path relative to `mount`) and the bearer token, and writes the ``SyncHTTPResponse``.
///
/// Every answer closes its connection (`Connection: close`). A `.bytes` body goes with
/// `Content-Length`, a `.stream` body chunked, each chunk written as it comes. Request bodies
/// are read only when the handler asks (`Content-Length` only; `Expect: 100-continue` is
/// answered then), so a handler that answers 413 first never reads one. Accepting and each
/// connection's reads and writes run on threads of the server's own, never on the cooperative
/// pool. A scripted handler makes it misbehave: any status, a redirect, an event stream that
/// never sends anything, or ``droppedConnection`` to close without an answer.
///
/// ```swift
/// let server = try LoopbackHTTPServer { request, token in
///     token == "t1" ? await service.respond(to: request, account: account) : unauthorized
/// }
/// defer { server.stop() }
/// let remote = SyncRemote.http(server.url, account: account) { _ in "t1" }
/// ```
package final class LoopbackHTTPServer: Sendable {
    /// Answers one request: `token` is the `Authorization: Bearer` token, if the request has one.
    package typealias Handler =
        @Sendable (_ request: SyncHTTPRequest, _ token: String?) async -> SyncHTTPResponse

    /// The answer that closes the connection, once its request was read, without writing
    /// anything: a connection lost after the request was sent.
    package static let droppedConnection = SyncHTTPResponse(status: 0)

    /// The port the server listens on, chosen by the system.
    package let port: Int
    /// Where requests are answered, with leading and trailing slashes: `"/sync/"`.
    package let mount: String
    private let sockets: LoopbackSockets

    /// The mount's URL: `http://127.0.0.1:PORT/sync/`.
    package var url: URL {
        URL(string: "http://127.0.0.1:\(port)\(mount)")!
    }

    /// Starts a server on 127.0.0.1, on a port the system chooses, answering requests under
    /// `mount` through `handler` (anything else gets 404).
    ///
    /// - Throws: `POSIXError` when the socket cannot be made, bound or listened on.
    package init(mount: String = "/sync/", handler: @escaping Handler) throws {
        self.mount = mount
        let listener = socket(AF_INET, Self.streamType, 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 128) == 0
                    && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(listener)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let sockets = LoopbackSockets(listener: listener)
        self.sockets = sockets
        Thread { [mount] in
            while let (connection, mailbox) = sockets.accept() {
                let served = LoopbackHTTPConnection(
                    socket: connection, mailbox: mailbox, mount: mount, handler: handler, sockets: sockets)
                Thread { served.serve() }.start()
            }
        }.start()
    }

    /// Stops listening and closes every connection, streams included; requests in flight end
    /// without an answer. Returns at once; the server's threads end on their own.
    package func stop() {
        sockets.stop()
    }

    deinit {
        sockets.stop()
    }

    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    #else
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #endif
}

/// The server's sockets: the listener and the open connections, which ``stop()`` shuts down
/// (waking the threads blocked on them) and each thread closes itself, under the lock, so a
/// descriptor is never shut down after its number was reused.
final class LoopbackSockets: Sendable {
    private struct State {
        var listener: Int32?
        var connections: [Int32: LoopbackMailbox] = [:]
        var stopped = false
    }

    private let state: Mutex<State>

    init(listener: Int32) {
        state = Mutex(State(listener: listener))
    }

    /// The next connection and its mailbox, or `nil` once the server stopped (the listener is
    /// closed then).
    func accept() -> (Int32, LoopbackMailbox)? {
        guard let listener = state.withLock({ $0.listener }) else { return nil }
        while true {
            #if canImport(Darwin)
            let connection = Darwin.accept(listener, nil, nil)
            #else
            let connection = Glibc.accept(listener, nil, nil)
            #endif
            // A signal, or a client that gave up before it was accepted: take the next one.
            if connection < 0 && (errno == EINTR || errno == ECONNABORTED) { continue }
            let mailbox = state.withLock { state -> LoopbackMailbox? in
                guard connection >= 0, !state.stopped else { return nil }
                let mailbox = LoopbackMailbox()
                state.connections[connection] = mailbox
                return mailbox
            }
            if let mailbox {
                var yes: Int32 = 1
                setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                return (connection, mailbox)
            }
            if connection >= 0 { close(connection) }
            state.withLock { state in
                state.stopped = true
                if let listener = state.listener { close(listener) }
                state.listener = nil
            }
            return nil
        }
    }

    /// Closes a connection its thread is done with.
    func release(_ connection: Int32) {
        state.withLock { state in
            state.connections[connection] = nil
            _ = close(connection)
        }
    }

    /// Shuts the listener and every connection down, and wakes each connection's thread.
    func stop() {
        state.withLock { state in
            state.stopped = true
            if let listener = state.listener { shutdown(listener, Int32(SHUT_RDWR)) }
            for (connection, mailbox) in state.connections {
                shutdown(connection, Int32(SHUT_RDWR))
                mailbox.post(.stop)
            }
        }
    }
}

/// What a connection's thread waits for: a handler's request to read the body, its answer, a
/// streamed chunk or the stream's end, or the server's stop.
final class LoopbackMailbox: Sendable {
    enum Letter: Sendable {
        case readBody(maximumBytes: Int, CheckedContinuation<Data, any Error>)
        case respond(SyncHTTPResponse)
        case chunk(Data)
        case end
        case stop
    }

    private let letters = Mutex<[Letter]>([])
    private let arrived = DispatchSemaphore(value: 0)

    func post(_ letter: Letter) {
        letters.withLock { $0.append(letter) }
        arrived.signal()
    }

    /// The next letter, or `nil` when none came within `timeout`. Blocks: call it on the
    /// connection's own thread only.
    func take(within timeout: DispatchTimeInterval) -> Letter? {
        guard arrived.wait(timeout: .now() + timeout) == .success else { return nil }
        return letters.withLock { $0.removeFirst() }
    }

    /// Asks the connection's thread for the body, at most `maximumBytes` of it.
    func readBody(maximumBytes: Int) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            post(.readBody(maximumBytes: maximumBytes, continuation))
        }
    }
}
