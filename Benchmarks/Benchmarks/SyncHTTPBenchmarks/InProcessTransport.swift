// A SyncHTTPTransport that hands each request to a SyncHTTPService in this process: the client's
// requests and JSON and the service's checks and JSON, with no HTTP between them. Its rows say
// how much of an HTTP push is HTTP itself.

import Foundation
import SyncHTTPSupport
import ValueStoreSync
import ValueStoreSyncHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SyncHTTPTransport {
    /// Answers each request with `service`, for `account`, as the routes would after checking
    /// its token. Opening a stream throws: these rows push with `pokes: .none`.
    static func inProcess(_ service: SyncHTTPService, mountedAt mount: URL, account: SyncAccount) -> Self {
        SyncHTTPTransport(
            send: { request in
                guard let url = request.url else { throw ValueStoreSyncHTTPBenchmarkError("a request without a URL") }
                let full = url.path(percentEncoded: false)
                let prefix = mount.path(percentEncoded: false)
                guard full.hasPrefix(prefix) else {
                    throw ValueStoreSyncHTTPBenchmarkError("\(full) is not under the mount \(prefix)")
                }
                let path = String(full.dropFirst(prefix.count).drop { $0 == "/" })
                var headers: [String: String] = [:]
                for (name, value) in request.allHTTPHeaderFields ?? [:] {
                    headers[name.lowercased()] = value
                }
                let body = request.httpBody ?? Data()
                let answer = await service.respond(
                    to: SyncHTTPRequest(
                        method: request.httpMethod ?? "GET", path: path, headers: headers, contentLength: body.count,
                        body: { _ in body }),
                    account: account)
                guard case .bytes(let bytes) = answer.body,
                    let head = HTTPURLResponse(
                        url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: answer.headers)
                else { throw ValueStoreSyncHTTPBenchmarkError("an answer that is not bytes") }
                return (bytes, head)
            },
            stream: { _ in throw ValueStoreSyncHTTPBenchmarkError("the in-process rows open no stream") })
    }
}
