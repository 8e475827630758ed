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
        didSet { streamSaying = nil }
    }
    /// ``stream``, calling `sending` as it sends the request itself, after whatever it does first
    /// (the URL-session transport's warm-up on Linux), so that a poke stream's ready timeout
    /// counts from then; `nil` for a transport that does not say.
    var streamSaying:
        (
            @Sendable (_ request: URLRequest, _ sending: @escaping @Sendable () -> Void) async throws -> (
                HTTPURLResponse, AsyncThrowingStream<Data, any Error>
            )
        )?

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

extension AsyncThrowingStream where Element == Data, Failure == any Error {
    /// The body a stream of chunks carries, whole: for an answer read through
    /// ``SyncHTTPTransport/stream`` that the caller wants at once.
    func collected() async throws -> Data {
        var data = Data()
        for try await chunk in self { data.append(chunk) }
        return data
    }

    /// Ends the stream unread, so that its request's connection closes: a stream ends when the
    /// task reading it is cancelled.
    func discard() {
        let reading = Task { for try await _ in self {} }
        reading.cancel()
    }
}
