// The floor of a poke stream's memory: Hummingbird alone, in this process on 127.0.0.1, answering
// `GET /sync/v1/pokes` with an event stream that says `ready` and then nothing until the client
// goes, with the headers the sync routes send. No authentication, no service, no account: what
// a stream costs here is what an open event stream costs Hummingbird and NIO, which the sync
// routes cannot cost less than.

import Foundation
import HTTPTypes
import Hummingbird

/// Hummingbird serving bare event streams on loopback.
public enum BareEventStreamServer {
    /// Starts the server on 127.0.0.1, on a port the system picks.
    ///
    /// ```swift
    /// let port = try await BareEventStreamServer.start()
    /// ```
    ///
    /// - Returns: The port.
    /// - Throws: ``ValueStoreSyncHTTPBenchmarkError`` when the server does not start listening.
    public static func start() async throws -> Int {
        let router = Router()
        router.get("/sync/v1/pokes") { _, _ -> Response in
            let headers: HTTPFields = [
                .contentType: "text/event-stream", .cacheControl: "no-cache, no-transform",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ]
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "event: ready\ndata:\n\n"))
                    // Held as the sync routes hold theirs: iterating a stream, which nothing
                    // finishes, until the task is cancelled.
                    let (held, _) = AsyncStream<Void>.makeStream()
                    for await _ in held {}
                    try await writer.finish(nil)
                })
        }
        return try await serveOnLoopback(router)
    }
}
