import Foundation
import ValueStoreSyncHTTP
import ValueStoreTestSupport

/// Reading the poke streams of the service's answers, each wait bounded.
enum PokeReading {
    static let ready = Data("event: ready\ndata:\n\n".utf8)
    static let poke = Data("event: poke\ndata:\n\n".utf8)
    static let heartbeat = Data("event: heartbeat\ndata:\n\n".utf8)

    /// The stream of a server-sent events answer.
    static func events(of response: SyncHTTPResponse) throws -> AsyncStream<Data> {
        guard case .stream(let chunks) = response.body else {
            throw NotAStream(status: response.status)
        }
        return chunks
    }

    /// An answer with bytes where a stream was expected.
    struct NotAStream: Error {
        var status: Int
    }

    /// The chunks of `events` up to and with the first that is `wanted`, or all of them when the
    /// stream ends first; fails by name after 30 seconds (a full run of the suite keeps the pool busy).
    static func read(_ events: AsyncStream<Data>, until wanted: Data?, _ what: String) async throws -> [Data] {
        try await within(.seconds(30), what) {
            var seen: [Data] = []
            for await chunk in events {
                seen.append(chunk)
                if chunk == wanted { break }
            }
            return seen
        }
    }

    /// Waits, polling, until `condition` holds; fails by name after 30 seconds. For what sends
    /// no event: a subscription opened or ended inside the service.
    static func waitUntil(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
        try await within(.seconds(30), what) {
            while !condition() {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }
}
