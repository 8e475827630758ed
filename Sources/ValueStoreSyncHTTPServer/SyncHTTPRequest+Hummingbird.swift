#if Hummingbird
import Foundation
package import Hummingbird
import NIOCore
package import ValueStoreSyncHTTP

extension SyncHTTPRequest {
    /// The service's view of a Hummingbird request: the path its route's `**` caught (under the
    /// mount), the query, the headers by lower-case name (repeated ones joined by commas), the
    /// declared length, and a body read only when the service asks, at most the bytes it allows.
    package init<Context: RequestContext>(_ request: Request, context: Context) {
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters {
            query[String(name)] = String(value)
        }
        self.init(
            method: request.method.rawValue,
            path: context.parameters.getCatchAll().joined(separator: "/"),
            query: query,
            headers: headers,
            contentLength: headers["content-length"].flatMap { Int($0) },
            body: { maximumBytes in
                do {
                    let buffer = try await request.body.collect(upTo: maximumBytes)
                    return Data(buffer.readableBytesView)
                } catch is NIOTooManyBytesError {
                    throw SyncHTTPRequest.BodyTooLarge()
                }
            }
        )
    }
}
#endif
