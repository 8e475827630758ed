import Foundation
import ValueStoreSyncHTTP

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// One connection of a ``LoopbackHTTPServer``, served on its own thread: it reads the request's
/// head, runs the handler in a task, reads the body when the handler asks, writes the answer
/// (a stream chunk by chunk), and closes.
struct LoopbackHTTPConnection: Sendable {
    let socket: Int32
    let mailbox: LoopbackMailbox
    let mount: String
    let handler: LoopbackHTTPServer.Handler
    let sockets: LoopbackSockets

    /// How long the thread waits for a letter before it checks whether the client went away.
    private static let patience = DispatchTimeInterval.milliseconds(100)

    init(
        socket: Int32, mailbox: LoopbackMailbox, mount: String, handler: @escaping LoopbackHTTPServer.Handler,
        sockets: LoopbackSockets
    ) {
        self.socket = socket
        self.mailbox = mailbox
        self.mount = mount
        self.handler = handler
        self.sockets = sockets
    }

    /// Serves the connection to its end; call it on the connection's own thread.
    func serve() {
        defer { sockets.release(socket) }
        var reader = SocketReader(socket: socket)
        guard let head = reader.head(), let request = parse(head) else {
            write(SyncHTTPResponse(status: 400))
            return finish()
        }
        guard let path = request.path else {
            write(SyncHTTPResponse(status: 404))
            return finish()
        }
        guard request.method != "HEAD" else {
            // Not the service's: the HTTP transport's warm-up on Linux, answered without a body.
            _ = transmit(Data("HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-length: 0\r\n\r\n".utf8))
            return finish()
        }
        let mailbox = self.mailbox
        let syncRequest = SyncHTTPRequest(
            method: request.method, path: path, query: request.query, headers: request.headers,
            contentLength: request.contentLength,
            body: { maximumBytes in try await mailbox.readBody(maximumBytes: maximumBytes) })
        let handler = self.handler
        let token = request.headers["authorization"].flatMap { value in
            value.hasPrefix("Bearer ") ? String(value.dropFirst("Bearer ".count)) : nil
        }
        let answering = Task { mailbox.post(.respond(await handler(syncRequest, token))) }
        defer { answering.cancel() }
        while let letter = nextLetter() {
            switch letter {
            case .readBody(let maximumBytes, let continuation):
                let length = request.contentLength ?? 0
                guard length <= maximumBytes else {
                    continuation.resume(throwing: SyncHTTPRequest.BodyTooLarge())
                    continue
                }
                if request.headers["expect"]?.lowercased() == "100-continue" {
                    _ = transmit(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                }
                if let body = reader.read(exactly: length) {
                    continuation.resume(returning: body)
                } else {
                    continuation.resume(throwing: POSIXError(.ECONNRESET))
                }
            case .respond(let response):
                guard response.status != 0 else { return }  // droppedConnection
                write(response)
                return finish()
            case .chunk, .end:
                continue
            case .stop:
                return
            }
        }
    }

    // MARK: Answering

    /// Writes `response`: its head, then its bytes, or its stream chunk by chunk until it ends,
    /// the client goes away, or the server stops.
    private func write(_ response: SyncHTTPResponse) {
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        for (name, value) in response.headers where !["content-length", "connection"].contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        head += "connection: close\r\n"
        switch response.body {
        case .bytes(let data):
            head += "content-length: \(data.count)\r\n\r\n"
            _ = transmit(Data(head.utf8) + data)
        case .stream(let chunks):
            head += "transfer-encoding: chunked\r\n\r\n"
            guard transmit(Data(head.utf8)) else { return }
            let mailbox = self.mailbox
            let relaying = Task {
                for await chunk in chunks where !chunk.isEmpty {
                    mailbox.post(.chunk(chunk))
                }
                mailbox.post(.end)
            }
            defer { relaying.cancel() }
            while let letter = nextLetter() {
                switch letter {
                case .chunk(let chunk):
                    guard transmit(Data((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Data("\r\n".utf8))
                    else { return }
                case .end:
                    _ = transmit(Data("0\r\n\r\n".utf8))
                    return
                case .stop:
                    return
                case .readBody(_, let continuation):
                    continuation.resume(throwing: SyncHTTPRequest.BodyTooLarge())
                case .respond:
                    continue
                }
            }
        }
    }

    /// Ends the answer: no more writes, then what the client still sends is read and dropped
    /// for a moment, so a body the handler never read does not turn the close into a reset
    /// that loses the answer.
    private func finish() {
        shutdown(socket, Int32(SHUT_WR))
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        for _ in 0..<20 {
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) >= 0 else { return }
            if ready.revents == 0 { continue }
            if recv(socket, &buffer, buffer.count, 0) <= 0 { return }
        }
    }

    /// The next letter; `nil` once the client went away.
    private func nextLetter() -> LoopbackMailbox.Letter? {
        while true {
            if let letter = mailbox.take(within: Self.patience) { return letter }
            if peerClosed() { return nil }
        }
    }

    /// Whether the client closed its end (a read would find the end of the stream).
    private func peerClosed() -> Bool {
        var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) <= 0
    }

    /// Writes all of `data`; `false` when the connection is gone.
    private func transmit(_ data: Data) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                #if canImport(Darwin)
                let flags: Int32 = 0
                #else
                let flags = Int32(MSG_NOSIGNAL)
                #endif
                let sent = send(socket, buffer.baseAddress! + offset, buffer.count - offset, flags)
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }

    private static func reason(_ status: Int) -> String {
        let reasons = [
            100: "Continue", 200: "OK", 307: "Temporary Redirect", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 413: "Content Too Large", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable", 504: "Gateway Timeout",
        ]
        return reasons[status] ?? "Status"
    }

    // MARK: Parsing

    private struct Head {
        var method: String
        var path: String?
        var query: [String: String]
        var headers: [String: String]
        var contentLength: Int?
    }

    /// The request line and headers; `path` is `nil` for a target outside the mount.
    private func parse(_ head: String) -> Head? {
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3, let target = URLComponents(string: String(requestLine[1])) else { return nil }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var query: [String: String] = [:]
        for item in target.queryItems ?? [] {
            query[item.name] = item.value ?? ""
        }
        let path = target.path.hasPrefix(mount) ? String(target.path.dropFirst(mount.count)) : nil
        return Head(
            method: String(requestLine[0]), path: path, query: query, headers: headers,
            contentLength: headers["content-length"].flatMap { Int($0) })
    }
}

/// Reads a socket through a buffer: the request's head, then exactly its body's bytes.
private struct SocketReader {
    let socket: Int32
    var buffer = Data()

    /// The head, up to the blank line (64 KiB at most); `nil` when the connection ends first.
    mutating func head() -> String? {
        let blankLine = Data("\r\n\r\n".utf8)
        while true {
            if let end = buffer.range(of: blankLine) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer = Data(buffer[end.upperBound...])
                return head
            }
            guard buffer.count < 64 << 10, fill() else { return nil }
        }
    }

    /// The next `count` bytes; `nil` when the connection ends first.
    mutating func read(exactly count: Int) -> Data? {
        while buffer.count < count {
            guard fill() else { return nil }
        }
        let body = Data(buffer.prefix(count))
        buffer = Data(buffer.dropFirst(count))
        return body
    }

    /// Reads what arrived; `false` at the end of the stream or on an error.
    private mutating func fill() -> Bool {
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = recv(socket, &bytes, bytes.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: bytes[..<count])
            return true
        }
    }
}
