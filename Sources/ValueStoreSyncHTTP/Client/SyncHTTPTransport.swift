public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// What carries a sync remote's HTTP requests: a witness of two closures, so tests and apps can
/// put their own in place of `URLSession`.
///
/// ```swift
/// var options = SyncHTTPOptions()
/// options.transport = .urlSession(.ephemeral)
/// ```
public struct SyncHTTPTransport: Sendable {
    /// Sends a request and returns the whole answer.
    ///
    /// ```swift
    /// let send: SyncHTTPTransport.Send = { request in try await session.data(for: request) }
    /// ```
    public typealias Send = @Sendable (_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
    /// Opens a request whose answer is read as it comes, or waits long: the head, then the body
    /// in chunks. The remote's poke streams and long polls go this way.
    ///
    /// ```swift
    /// let (head, chunks) = try await transport.stream(request)
    /// for try await chunk in chunks { parser.feed(chunk) }
    /// ```
    public typealias Stream =
        @Sendable (_ request: URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>)

    /// Sends a request and returns the whole answer.
    ///
    /// ```swift
    /// let (data, head) = try await transport.send(request)
    /// ```
    public var send: Send
    /// Opens a request whose answer is read as it comes.
    ///
    /// ```swift
    /// let (head, chunks) = try await transport.stream(request)
    /// ```
    public var stream: Stream {
        // A stream of one's own may not say when it sends.
        didSet { announcesSending = false }
    }
    /// Whether ``stream`` calls ``sending`` as it sends a request itself, after whatever it does
    /// first: the URL-session transport does, after its warm-up on Linux.
    var announcesSending = false

    /// A transport from its closures.
    ///
    /// ```swift
    /// let transport = SyncHTTPTransport(send: { try await inner.send($0) }, stream: { try await inner.stream($0) })
    /// ```
    ///
    /// - Parameters:
    ///   - send: Sends a request and returns the whole answer.
    ///   - stream: Opens a request whose answer is read as it comes.
    public init(send: @escaping Send, stream: @escaping Stream) {
        self.send = send
        self.stream = stream
    }
}

extension SyncHTTPTransport {
    /// Bound by the remote's pokes around the opening of one stream, and called by a transport
    /// that ``announcesSending`` as it sends the stream's request itself: the stream's ready
    /// timeout counts from then, so that a token's fetch and the transport's own preparation
    /// never use it up.
    @TaskLocal static var sending: (@Sendable () -> Void)?
}

extension AsyncThrowingStream where Element == Data, Failure == any Error {
    /// The body a stream of chunks carries, whole: for an answer read through
    /// ``SyncHTTPTransport/stream`` that the caller wants at once.
    func collected() async throws -> Data {
        var data = Data()
        for try await chunk in self { data.append(chunk) }
        return data
    }
}
