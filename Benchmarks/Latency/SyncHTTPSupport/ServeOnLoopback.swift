// Serving a router on loopback, for the HTTP tools: an Application of its own on 127.0.0.1, on a
// port the system picks, logging errors only (the tools' standard output carries their
// measurements), run in a detached task for the life of the process.

import Hummingbird
import Logging

/// Serves `router` on 127.0.0.1 and returns the port once it listens.
///
/// ```swift
/// let port = try await serveOnLoopback(router)
/// ```
///
/// - Parameter router: What the server answers.
/// - Returns: The port the system picked.
/// - Throws: ``ValueStoreSyncHTTPBenchmarkError`` when the server does not start listening.
func serveOnLoopback(_ router: Router<BasicRequestContext>) async throws -> Int {
    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "sync-http-benchmarks")
    logger.logLevel = .error
    let app = Application(
        router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            listening.yield(channel.localAddress?.port ?? 0)
            listening.finish()
        }, logger: logger)
    Task.detached { try await app.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next(), port > 0 else {
        throw ValueStoreSyncHTTPBenchmarkError("the server did not start listening")
    }
    return port
}
