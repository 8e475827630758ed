// A SyncHTTPTransport over AsyncHTTPClient, for the rows that show what the client library costs:
// the same pushes and the same bare requests as the default transport's (URLSession), through
// the server libraries' own client. It sends; the rows open no stream.

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncHTTPSupport
import ValueStoreSyncHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One client for the process, which never follows a redirect, as the default transport.
let sharedHTTPClient = HTTPClient(
    eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

extension SyncHTTPTransport {
    /// Sends each request through `sharedHTTPClient` and collects its whole answer. Opening a
    /// stream throws: these rows push with `pokes: .none`.
    static var asyncHTTPClient: Self {
        SyncHTTPTransport(
            send: { request in
                guard let url = request.url else { throw ValueStoreSyncHTTPBenchmarkError("a request without a URL") }
                var outgoing = HTTPClientRequest(url: url.absoluteString)
                outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
                for (name, value) in request.allHTTPHeaderFields ?? [:] {
                    outgoing.headers.add(name: name, value: value)
                }
                if let body = request.httpBody {
                    outgoing.body = .bytes(ByteBuffer(bytes: body))
                }
                // URLSession's idle timeout, as a deadline for the answer's head, within 1 s to an hour.
                let seconds = request.timeoutInterval.isFinite ? min(max(request.timeoutInterval, 1), 3_600) : 3_600
                let timeout = TimeAmount.milliseconds(Int64(seconds * 1_000))
                let response = try await sharedHTTPClient.execute(outgoing, timeout: timeout)
                let body = try await response.body.collect(upTo: 64 << 20)
                var fields: [String: String] = [:]
                for (name, value) in response.headers {
                    fields[name] = fields[name].map { "\($0), \(value)" } ?? value
                }
                guard
                    let head = HTTPURLResponse(
                        url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: fields)
                else { throw ValueStoreSyncHTTPBenchmarkError("an answer URLSession's types cannot hold") }
                return (Data(body.readableBytesView), head)
            },
            stream: { _ in throw ValueStoreSyncHTTPBenchmarkError("the AsyncHTTPClient rows open no stream") })
    }
}
