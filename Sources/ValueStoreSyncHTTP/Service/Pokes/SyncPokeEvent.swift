package import Foundation

/// The server-sent events of `GET v1/pokes`, as the bytes on the wire. They carry no data: a
/// poke says "pull now", and the pull brings what changed.
///
/// ```swift
/// continuation.yield(SyncPokeEvent.ready)
/// ```
package enum SyncPokeEvent {
    /// The events' names, as the client reads them: one spelling for both sides of the wire.
    package static let readyName = "ready"
    package static let pokeName = "poke"
    package static let heartbeatName = "heartbeat"

    /// Sent at once when a stream opens: the stream is live, and a proxy did not buffer it.
    package static let ready = bytes(of: readyName)
    /// Sent when the account changed on the server.
    package static let poke = bytes(of: pokeName)
    /// Sent after ``SyncHTTPLimits/pokeHeartbeat`` of quiet, so proxies keep the stream open
    /// and the client can tell a dead stream from a quiet one.
    package static let heartbeat = bytes(of: heartbeatName)

    /// An event with no data, as the bytes on the wire.
    private static func bytes(of name: String) -> Data {
        Data("event: \(name)\ndata:\n\n".utf8)
    }
}

/// The answer to a long poll, `GET v1/pokes?wait=SECONDS`: `{"poked":true}` as soon as the
/// account is poked, `{"poked":false}` when the wait ends first.
///
/// ```swift
/// let answer = try JSONDecoder().decode(SyncPokeWaitAnswer.self, from: body)
/// if answer.poked { try await replica.syncNow() }
/// ```
package struct SyncPokeWaitAnswer: Codable, Hashable, Sendable {
    /// Whether the account was poked during the wait.
    package var poked: Bool

    /// An answer.
    package init(poked: Bool) {
        self.poked = poked
    }

    /// The answer as the service writes it: its `Codable` form, the one spelling of the wire.
    package var body: Data {
        do {
            return try JSONEncoder().encode(self)
        } catch {
            preconditionFailure("a struct of one Bool always encodes: \(error)")
        }
    }
}
