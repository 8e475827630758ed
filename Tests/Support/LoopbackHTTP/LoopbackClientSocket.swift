import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A client's TCP connection to a server on 127.0.0.1, for tests that write HTTP by hand: a raw
/// exchange, a stream read as it comes, a request cut short. Plain POSIX sockets; the reads
/// block, so they run on a thread of their own (``received(until:within:)``), never on the
/// cooperative pool. The connection closes when the value goes.
///
/// ```swift
/// let client = try LoopbackClientSocket(port: port)
/// try client.send("GET /sync/v1/pokes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
/// let head = await client.received(until: "event: ready", within: .seconds(20))
/// ```
package final class LoopbackClientSocket: Sendable {
    private let descriptor: Int32

    /// Connects to 127.0.0.1:`port`.
    /// - Throws: `POSIXError` when the socket cannot be made or the connection is refused.
    package init(port: Int) throws {
        #if canImport(Darwin)
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit {
        close(descriptor)
    }

    /// Sends all of `text`.
    /// - Throws: `POSIXError` when the connection cannot take it.
    package func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Self.sendBytes(descriptor, $0.baseAddress! + sent, bytes.count - sent) }
            guard count > 0 else { throw POSIXError(.EPIPE) }
            sent += count
        }
    }

    /// What the server sends from now until `text` has come (or, with no `text`, until the
    /// connection ends), the connection ends, or `limit` passes; read on a thread of its own.
    package func received(until text: String? = nil, within limit: Duration? = nil) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: self.read(until: text, within: limit))
            }
        }
    }

    /// ``received(until:within:)``, blocking the calling thread.
    package func read(until text: String? = nil, within limit: Duration? = nil) -> String {
        let deadline = limit.map { ContinuousClock.now + $0 }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while deadline.map({ ContinuousClock.now < $0 }) ?? true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer.append(contentsOf: buffer[..<count])
            if let text, String(decoding: answer, as: UTF8.self).contains(text) { break }
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// `send`, without SIGPIPE where the platform allows: a server that closed the connection
    /// must not end the tests.
    private static func sendBytes(_ socket: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
        Darwin.send(socket, bytes, count, 0)
        #else
        Glibc.send(socket, bytes, count, Int32(MSG_NOSIGNAL))
        #endif
    }
}
