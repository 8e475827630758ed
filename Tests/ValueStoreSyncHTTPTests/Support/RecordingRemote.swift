import Foundation
import Synchronization
import ValueStoreSync

/// A remote over an in-memory server that records every call it gets, and whose pokes the test
/// sends itself: it proves which backend calls a request made (none, for one refused early) and
/// how many subscriptions to an account's pokes are open.
final class RecordingRemote: Sendable {
    private struct State {
        var pushes: [SyncPushRequest] = []
        var pulls: [SyncPullRequest] = []
        var subscriptions = 0
        var pokeStreams: [Int: AsyncStream<Void>.Continuation] = [:]
    }

    private let state = Mutex(State())
    let server: InMemorySyncServer

    init(server: InMemorySyncServer = InMemorySyncServer()) {
        self.server = server
    }

    /// The remote of `account`, for ``SyncHTTPService/init(limits:remote:)``.
    func remote(for account: SyncAccount) -> SyncRemote {
        let inner = server.remote(for: account)
        return SyncRemote(
            label: "recording",
            push: { request in
                self.state.withLock { $0.pushes.append(request) }
                return try await inner.push(request)
            },
            pull: { request in
                self.state.withLock { $0.pulls.append(request) }
                return try await inner.pull(request)
            },
            pokes: {
                let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                let id = self.state.withLock { state in
                    state.subscriptions += 1
                    state.pokeStreams[state.subscriptions] = continuation
                    return state.subscriptions
                }
                continuation.onTermination = { _ in self.state.withLock { _ = $0.pokeStreams.removeValue(forKey: id) } }
                return stream
            })
    }

    /// The pushes the remote was asked for.
    var pushes: [SyncPushRequest] { state.withLock { $0.pushes } }
    /// The pulls the remote was asked for.
    var pulls: [SyncPullRequest] { state.withLock { $0.pulls } }
    /// How many times `pokes()` was called.
    var subscriptions: Int { state.withLock { $0.subscriptions } }
    /// How many pokes streams are open now.
    var openPokeStreams: Int { state.withLock { $0.pokeStreams.count } }

    /// Signals every open pokes stream.
    func poke() {
        let continuations = state.withLock { Array($0.pokeStreams.values) }
        for continuation in continuations {
            continuation.yield()
        }
    }
}
