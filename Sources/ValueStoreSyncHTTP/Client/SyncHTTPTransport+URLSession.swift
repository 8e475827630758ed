import Synchronization

#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

extension SyncHTTPTransport {
    /// The default transport: ``urlSession(_:)`` over an ephemeral configuration that keeps no
    /// cookies and no cache. The bearer token is then a request's only credential (a cookie a
    /// server or a proxy sets is never sent back), no sync answer can come from a cache, and
    /// on Linux, where URLSession matches every header line against its cookies, each request
    /// takes less time.
    ///
    /// ```swift
    /// var options = SyncHTTPOptions()
    /// options.transport = .urlSession()
    /// ```
    ///
    /// - Returns: The transport.
    public static func urlSession() -> Self {
        urlSession(over: URLSessions())
    }

    /// A transport over a `URLSession` of its own, made with `configuration` as it is (its
    /// cookies and cache too: give one with a cookie storage for a server that authenticates
    /// with a cookie), that never follows a redirect (the token never reaches another host) and
    /// reads streamed answers through its delegate, on Linux and Apple platforms alike. On
    /// Linux, streams and long polls have a second session, and each is sent just after a `HEAD`
    /// of its URL without credentials, so that it waits on a warm connection: there, URLSession
    /// spins a core while a request that opened its own connection waits for its answer.
    ///
    /// ```swift
    /// var options = SyncHTTPOptions()
    /// options.transport = .urlSession(.ephemeral)
    /// ```
    ///
    /// - Parameter configuration: The sessions' configuration: timeouts, proxies, headers,
    ///   cookies, cache. ``urlSession()`` gives an ephemeral one without cookies or cache.
    /// - Returns: The transport.
    public static func urlSession(_ configuration: URLSessionConfiguration) -> Self {
        urlSession(over: URLSessions(configuration))
    }

    /// A transport over `sessions`, which it invalidates when its last copy is released.
    static func urlSession(over sessions: URLSessions) -> Self {
        @Sendable func open(_ request: URLRequest, sending: @Sendable () -> Void) async throws -> (
            HTTPURLResponse, AsyncThrowingStream<Data, any Error>
        ) {
            #if canImport(FoundationNetworking)
            await sessions.streams.warmConnection(for: request, in: sessions.streamSession)
            // A caller cancelled during the warm-up sends nothing more.
            try _Concurrency.Task.checkCancellation()
            sending()
            return try await sessions.streams.open(request, in: sessions.streamSession)
            #else
            sending()
            return try await sessions.requests.open(request, in: sessions.requestSession)
            #endif
        }
        var transport = SyncHTTPTransport(
            send: { request in try await sessions.requests.send(request, in: sessions.requestSession) },
            stream: { request in try await open(request, sending: {}) }
        )
        transport.streamSaying = { request, sending in try await open(request, sending: sending) }
        return transport
    }
}

/// The sessions of one URL session transport (``SyncHTTPTransport/urlSession()``,
/// ``SyncHTTPTransport/urlSession(_:)``), which its closures share and which are invalidated
/// when the last copy of the transport is released: a session holds its delegate, and is itself
/// held, until it is invalidated, so every `SyncHTTPOptions()` made would otherwise keep its
/// sessions for the life of the process. Requests still in flight then finish first.
final class URLSessions: Sendable {
    fileprivate let requests = URLSessionStreams()
    let requestSession: URLSession
    #if canImport(FoundationNetworking)
    // Streams have a session of their own, whose connection each one warms first, and a
    // delegate of their own: a delegate knows its tasks by identifiers each session numbers.
    fileprivate let streams = URLSessionStreams()
    let streamSession: URLSession
    #endif

    init(_ configuration: URLSessionConfiguration = URLSessions.withoutCookiesOrCache()) {
        requestSession = URLSession(configuration: configuration, delegate: requests, delegateQueue: nil)
        #if canImport(FoundationNetworking)
        streamSession = URLSession(configuration: configuration, delegate: streams, delegateQueue: nil)
        #endif
    }

    /// The default transport's configuration: an ephemeral one that neither stores, accepts
    /// nor sends cookies, and neither reads nor writes a cache.
    static func withoutCookiesOrCache() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// Every session: the request session, and on Linux the stream session.
    var all: [URLSession] {
        #if canImport(FoundationNetworking)
        [requestSession, streamSession]
        #else
        [requestSession]
        #endif
    }

    deinit {
        for session in all { session.finishTasksAndInvalidate() }
    }
}

/// The delegate of a transport's session: each task's head and body chunks, handed to the
/// caller as they arrive. A redirect is refused, so its 3xx answer is what the caller gets.
// @unchecked Sendable: `tasks` is a Mutex; URLSession calls the delegate on its own queue.
private final class URLSessionStreams: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Task {
        var head: CheckedContinuation<(HTTPURLResponse, AsyncThrowingStream<Data, any Error>), any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation
        var chunks: AsyncThrowingStream<Data, any Error>
    }

    private let tasks = Mutex<[Int: Task]>([:])

    /// Sends `request` and collects its whole answer.
    func send(_ request: URLRequest, in session: URLSession) async throws -> (Data, HTTPURLResponse) {
        let (head, chunks) = try await open(request, in: session)
        return (try await chunks.collected(), head)
    }

    #if canImport(FoundationNetworking)
    /// Sends a `HEAD` of `request`'s URL, without its credentials, so that the request that
    /// follows finds an open connection in `session`.
    ///
    /// On Linux, URLSession (libcurl driven by dispatch sources) keeps the write-readiness
    /// source a new connection's connect asked for: while a request that opened its own
    /// connection waits for its answer, that source fires without end, and the process spins a
    /// core (about 85% of one, seen here) for as long as the answer takes. A poke stream's answer
    /// lasts as long as the stream, so each one is sent on a connection that already served a
    /// request. Its answer (a 401 or a 404, say) does not matter, nor does its failure, nor a
    /// server that takes more than two seconds: the stream is opened either way.
    func warmConnection(for request: URLRequest, in session: URLSession) async {
        guard let url = request.url else { return }
        var warm = URLRequest(url: url)
        warm.httpMethod = "HEAD"
        guard let (_, chunks) = try? await open(warm, in: session, cancellingAfter: .seconds(2)) else { return }
        do {
            for try await _ in chunks {}
        } catch {}
    }
    #endif

    func open(
        _ request: URLRequest,
        in session: URLSession,
        cancellingAfter limit: DispatchTimeInterval? = nil
    ) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) {
        // A caller cancelled already sends nothing.
        try _Concurrency.Task.checkCancellation()
        let task = session.dataTask(with: request)
        let (chunks, body) = AsyncThrowingStream<Data, any Error>.makeStream()
        body.onTermination = { _ in task.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                tasks.withLock { $0[task.taskIdentifier] = Task(head: head, body: body, chunks: chunks) }
                // A cancellation before the task was registered cancelled it already, and its
                // completion may have come and found nothing to end: it is ended here instead,
                // by whichever of the two takes it out of `tasks` first.
                guard !_Concurrency.Task.isCancelled else {
                    end(task.taskIdentifier, with: CancellationError())
                    return
                }
                if let limit {
                    DispatchQueue.global().asyncAfter(deadline: .now() + limit) { task.cancel() }
                }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// Ends the task `identifier` with `error`, unless it has ended already.
    private func end(_ identifier: Int, with error: (any Error)?) {
        guard let ended = tasks.withLock({ $0.removeValue(forKey: identifier) }) else { return }
        if let head = ended.head {
            head.resume(throwing: error ?? URLError(.badServerResponse))
        }
        ended.body.finish(throwing: error)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let started = tasks.withLock { tasks -> Task? in
            defer { tasks[dataTask.taskIdentifier]?.head = nil }
            return tasks[dataTask.taskIdentifier]
        }
        guard let started, let head = started.head, let response = response as? HTTPURLResponse else {
            completionHandler(.cancel)
            return
        }
        head.resume(returning: (response, started.chunks))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = tasks.withLock { $0[dataTask.taskIdentifier] }?.body.yield(data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        end(task.taskIdentifier, with: error)
    }
}
