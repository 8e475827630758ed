public import Foundation

/// One HTTP request to a ``SyncHTTPService``, in no web framework's types: what an adapter (the
/// Hummingbird routes, a test's loopback server, a team's own framework) hands the service.
///
/// The body is read only when the service asks, with the most bytes it accepts, so a request
/// over ``SyncHTTPLimits/maximumRequestBytes`` is refused before its body is read.
///
/// ```swift
/// let request = SyncHTTPRequest(
///     method: "POST", path: "v1/push", headers: ["content-type": "application/json"],
///     contentLength: body.count, body: { _ in body })
/// let response = await service.respond(to: request, account: SyncAccount(id: "user-42"))
/// ```
public struct SyncHTTPRequest: Sendable {
    /// Reads the request's body, refusing one longer than `maximumBytes` by throwing
    /// ``BodyTooLarge``.
    ///
    /// ```swift
    /// let body: SyncHTTPRequest.Body = { maximumBytes in
    ///     try await request.body.collect(upTo: maximumBytes)
    /// }
    /// ```
    public typealias Body = @Sendable (_ maximumBytes: Int) async throws -> Data

    /// What an adapter's ``Body`` throws for a body longer than it was allowed to read.
    ///
    /// ```swift
    /// guard data.count <= maximumBytes else { throw SyncHTTPRequest.BodyTooLarge() }
    /// ```
    public struct BodyTooLarge: Error, Sendable {
        /// The error.
        ///
        /// ```swift
        /// throw SyncHTTPRequest.BodyTooLarge()
        /// ```
        public init() {}
    }

    /// The method, upper case: `"GET"` or `"POST"`.
    ///
    /// ```swift
    /// if request.method == "POST" { … }
    /// ```
    public var method: String
    /// The path under the routes' mount, without a leading slash: `"v1/push"`.
    ///
    /// ```swift
    /// let isPush = request.path == "v1/push"
    /// ```
    public var path: String
    /// The query's items by name: `["wait": "30"]`.
    ///
    /// ```swift
    /// let wait = request.query["wait"].flatMap(Int.init)
    /// ```
    public var query: [String: String]
    /// The headers by lower-case name.
    ///
    /// ```swift
    /// let type = request.headers["content-type"]
    /// ```
    public var headers: [String: String]
    /// The body's length as the request declares it (`Content-Length`), when it does.
    ///
    /// ```swift
    /// if let length = request.contentLength, length > limits.maximumRequestBytes { … }
    /// ```
    public var contentLength: Int?
    /// Reads the body; see ``Body``.
    ///
    /// ```swift
    /// let data = try await request.body(limits.maximumRequestBytes)
    /// ```
    public var body: Body

    /// A request from its parts.
    ///
    /// ```swift
    /// let request = SyncHTTPRequest(method: "GET", path: "v1/pokes", query: ["wait": "30"])
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method, upper case.
    ///   - path: The path under the mount, without a leading slash.
    ///   - query: The query's items by name.
    ///   - headers: The headers by lower-case name.
    ///   - contentLength: The declared body length, when the request has one.
    ///   - body: Reads the body; by default an empty one.
    public init(
        method: String,
        path: String,
        query: [String: String] = [:],
        headers: [String: String] = [:],
        contentLength: Int? = nil,
        body: @escaping Body = { _ in Data() }
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.contentLength = contentLength
        self.body = body
    }
}
