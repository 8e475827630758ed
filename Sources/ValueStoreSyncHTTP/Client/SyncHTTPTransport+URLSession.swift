import Synchronization

#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

extension SyncHTTPTransport {
    /// A transport over a `URLSession` of its own, made with `configuration`, that never follows
    /// a redirect (the token never reaches another host) and reads streamed answers through its
    /// delegate, on Linux and Apple platforms alike.
    ///
    /// ```swift
    /// var options = SyncHTTPOptions()
    /// options.transport = .urlSession(.ephemeral)
    /// ```
    ///
    /// - Parameter configuration: The session's configuration; an ephemeral one by default (no
    ///   cookies, no cache on disk).
    /// - Returns: The transport.
    public static func urlSession(_ configuration: URLSessionConfiguration = .ephemeral) -> Self {
        let delegate = URLSessionStreams()
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        return SyncHTTPTransport(
            send: { request in
                let (head, chunks) = try await delegate.open(request, in: session)
                var data = Data()
                for try await chunk in chunks { data.append(chunk) }
                return (data, head)
            },
            stream: { request in try await delegate.open(request, in: session) }
        )
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

    func open(
        _ request: URLRequest,
        in session: URLSession
    ) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) {
        let task = session.dataTask(with: request)
        let (chunks, body) = AsyncThrowingStream<Data, any Error>.makeStream()
        body.onTermination = { _ in task.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                tasks.withLock { $0[task.taskIdentifier] = Task(head: head, body: body, chunks: chunks) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
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
        guard let ended = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let head = ended.head {
            head.resume(throwing: error ?? URLError(.badServerResponse))
        }
        ended.body.finish(throwing: error)
    }
}
