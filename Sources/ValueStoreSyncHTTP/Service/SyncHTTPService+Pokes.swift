import Foundation
import ValueStore
import ValueStoreSync

extension SyncHTTPService {
    /// The longest long poll the service holds, whatever `wait` asks.
    static let longestWait = 60

    /// Ends every open poke stream, and answers every later pokes request 503.
    ///
    /// A server calls this when it shuts down (the deployable server on `SIGTERM`): each
    /// server-sent events stream ends, a long poll in flight is answered 503, and pushes and
    /// pulls in flight go on. A client opens its next stream on another instance, and pulls
    /// first. Every copy of the service shares its streams, so one call ends them all.
    ///
    /// ```swift
    /// let service = SyncHTTPService(remote: server.remote(for:))
    /// service.endPokeStreams()
    /// ```
    public func endPokeStreams() {
        shared.pokes.end()
    }

    /// Answers `GET v1/pokes`: server-sent events, or with `wait`, a long poll.
    func pokes(_ request: SyncHTTPRequest, of account: SyncAccount) async -> SyncHTTPResponse {
        if let named = request.query["account"] {
            do {
                try Self.check(named, is: account)
            } catch {
                return SyncHTTPProblem(error).response
            }
        }
        guard let wait = request.query["wait"] else {
            return events(of: account)
        }
        guard let seconds = Int(wait), seconds >= 0 else {
            return SyncHTTPProblem(
                status: 400, code: .decodingFailed, detail: "wait is not a whole number of seconds: '\(wait)'"
            ).response
        }
        return await longPoll(of: account, seconds: min(seconds, Self.longestWait))
    }

    private var shutDown: SyncHTTPResponse {
        SyncHTTPProblem(status: 503, code: .unavailable, detail: "the server is shutting down").response
    }

    /// A stream of server-sent events that lives ``SyncHTTPLimits/maximumPokeStreamDuration``.
    private func events(of account: SyncAccount) -> SyncHTTPResponse {
        guard let stream = shared.pokes.open(account, for: limits.maximumPokeStreamDuration, kind: .events) else {
            return shutDown
        }
        let headers = [
            "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no",
        ]
        return SyncHTTPResponse(status: 200, headers: headers, body: .stream(stream))
    }

    /// A ``SyncPokeWaitAnswer``: poked at the account's first poke, not when the wait ends first.
    private func longPoll(of account: SyncAccount, seconds: Int) async -> SyncHTTPResponse {
        guard let stream = shared.pokes.open(account, for: .seconds(seconds), kind: .wait) else {
            return shutDown
        }
        var poked = false
        for await event in stream where event == SyncPokeEvent.poke {
            poked = true
            break
        }
        if !poked, shared.pokes.isEnded {
            return shutDown
        }
        return SyncHTTPResponse(
            status: 200, headers: ["content-type": "application/json"],
            body: .bytes(SyncPokeWaitAnswer(poked: poked).body))
    }
}
