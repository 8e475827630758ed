import Foundation
package import ValueStore

/// An error as an `application/problem+json` document (RFC 9457), with the
/// ``ValueStoreError/Code`` a client turns back into a ``ValueStoreError``:
/// `{"type": "about:blank", "title": "Unauthorized", "status": 401, "code": "unauthorized",
/// "detail": "…"}`.
package struct SyncHTTPProblem: Codable, Sendable, Hashable {
    package var type = "about:blank"
    package var title: String
    package var status: Int
    package var code: String
    package var detail: String?

    package init(status: Int, code: ValueStoreError.Code, detail: String?) {
        self.title = Self.titles[status] ?? "Error"
        self.status = status
        self.code = code.rawValue
        self.detail = detail
    }

    /// The problem an error thrown by a remote becomes: its code, and the status that says how
    /// a client should take it.
    package init(_ error: any Error) {
        let code = (error as? ValueStoreError)?.code ?? .unavailable
        let detail = (error as? ValueStoreError)?.reason
        self.init(status: Self.status(of: code), code: code, detail: detail)
    }

    /// The status of each code: 401 and 403 for credentials, 503 for a server that cannot answer
    /// now (the client retries), 400 for a request the server will never take.
    package static func status(of code: ValueStoreError.Code) -> Int {
        switch code {
        case .unauthorized: 401
        case .forbidden: 403
        case .notFound: 404
        case .decodingFailed, .invalidConfiguration: 400
        case .outcomeUnknown: 504
        default: 503
        }
    }

    /// The reason phrase of each status the service answers.
    private static let titles = [
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 413: "Content Too Large",
        429: "Too Many Requests", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]

    /// The problem as an HTTP answer; a 401 says, in `www-authenticate`, that a bearer token is
    /// wanted.
    package var response: SyncHTTPResponse {
        let body = (try? JSONEncoder().encode(self)) ?? Data()
        var headers = ["content-type": "application/problem+json"]
        if status == 401 {
            headers["www-authenticate"] = "Bearer"
        }
        return SyncHTTPResponse(status: status, headers: headers, body: .bytes(body))
    }

    /// The error a client throws for this problem.
    package func error(from store: String) -> ValueStoreError {
        ValueStoreError(.init(code), store: store, reason: detail ?? "the server answered \(status) \(title)")
    }
}
