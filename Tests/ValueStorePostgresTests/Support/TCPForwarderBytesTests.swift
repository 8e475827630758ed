#if PostgreSQL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Testing
import ValueStoreTestSupport

extension PostgresTests.Forwarder {
    /// ``TCPForwarder/Traffic/bytes``, which the chaos test's HTTP mode puts between devices and
    /// sync servers, passes bytes that are no PostgreSQL message as they come: read as
    /// PostgreSQL's, the server's side of an HTTP connection never made a whole message, and was
    /// held forever. The modes the chaos schedule sets still apply.
    @Test func bytesPassAnyProtocolBothWaysAndTheModesStillApply() async throws {
        let echo = try EchoServer()
        defer { echo.stop() }
        let forwarder = try TCPForwarder(to: .tcp(host: "127.0.0.1", port: echo.port), carrying: .bytes)
        defer { forwarder.stop() }
        let request = "POST /sync/v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"

        #expect(try await Self.exchange(request, port: forwarder.port) == request, "the echo came back whole")

        forwarder.mode = .dropAnswers
        #expect(try await Self.exchange(request, port: forwarder.port).isEmpty, "the answer is lost")
        #expect(forwarder.droppedAnswers == 1)
        #expect(echo.received == 2 * request.utf8.count, "yet the request reached the server")

        forwarder.mode = .refuse
        #expect((try? LoopbackClientSocket(port: forwarder.port)) == nil, "the port is closed")
        forwarder.mode = .pass
        #expect(try await Self.exchange(request, port: forwarder.port) == request, "passing again")
    }

    /// Connects to `port`, sends `text`, and reads until it came back, the connection ends, or
    /// 10 s pass (a hang guard).
    static func exchange(_ text: String, port: Int) async throws -> String {
        let client = try LoopbackClientSocket(port: port)
        try client.send(text)
        return await client.received(until: text, within: .seconds(10))
    }
}

/// A server on `127.0.0.1` that sends back whatever each connection sends it, on the forwarder's
/// own sockets.
private final class EchoServer: Sendable {
    let port: Int
    private let state = Mutex((stopped: false, received: 0))

    init() throws {
        let (listener, port) = try TCPForwarder.listeningSocket(port: 0)
        self.port = port
        Thread.detachNewThread { [self] in
            defer { close(listener) }
            while !state.withLock({ $0.stopped }) {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 10) > 0 else { continue }
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { continue }
                Thread.detachNewThread { [self] in echo(connection) }
            }
        }
    }

    /// How many bytes it received, on every connection.
    var received: Int { state.withLock { $0.received } }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    private func echo(_ connection: Int32) {
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            state.withLock { $0.received += count }
            guard TCPForwarder.writeAll(connection, buffer, count) else { return }
        }
    }
}
#endif
