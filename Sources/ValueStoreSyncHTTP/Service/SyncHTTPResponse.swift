public import Foundation

/// A ``SyncHTTPService``'s answer, in no web framework's types: an adapter writes its status,
/// headers and body.
///
/// ```swift
/// let response = await service.respond(to: request, account: account)
/// print(response.status, response.headers["content-type"] ?? "")
/// ```
public struct SyncHTTPResponse: Sendable {
    /// A body: bytes known at once, or a stream the adapter writes as it comes (server-sent
    /// events), which ends when the service ends it.
    ///
    /// ```swift
    /// switch response.body {
    /// case .bytes(let data): write(data)
    /// case .stream(let chunks): for await chunk in chunks { write(chunk) }
    /// }
    /// ```
    public enum Body: Sendable {
        /// The whole body.
        case bytes(Data)
        /// A body written chunk by chunk; the response ends when the stream does.
        case stream(AsyncStream<Data>)
    }

    /// The status code: 200, 401, 413, …
    ///
    /// ```swift
    /// if response.status == 429 { … }
    /// ```
    public var status: Int
    /// The headers by lower-case name.
    ///
    /// ```swift
    /// let retryAfter = response.headers["retry-after"]
    /// ```
    public var headers: [String: String]
    /// The body.
    ///
    /// ```swift
    /// if case .bytes(let data) = response.body { print(data.count) }
    /// ```
    public var body: Body

    /// A response from its parts.
    ///
    /// ```swift
    /// let response = SyncHTTPResponse(status: 204, headers: [:], body: .bytes(Data()))
    /// ```
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The headers by lower-case name.
    ///   - body: The body.
    public init(status: Int, headers: [String: String] = [:], body: Body = .bytes(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
