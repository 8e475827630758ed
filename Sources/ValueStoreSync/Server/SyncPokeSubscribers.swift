import Synchronization

/// The streams of ``SyncPoke``s an in-memory server's remotes started, by account: each poke
/// reaches every stream of its account, in order, none dropped (a replica that skips the echo
/// of its own push must still hear every other poke).
final class SyncPokeSubscribers: Sendable {
    private struct State {
        var streams: [SyncAccount: [UInt64: AsyncStream<SyncPoke>.Continuation]] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    /// A new stream of `account`'s pokes, until its consumer stops iterating.
    func pokes(of account: SyncAccount) -> AsyncStream<SyncPoke> {
        let (stream, continuation) = AsyncStream<SyncPoke>.makeStream()
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.streams[account, default: [:]][state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.streams[account]?[id] = nil
                if state.streams[account]?.isEmpty == true {
                    state.streams[account] = nil
                }
            }
        }
        return stream
    }

    /// Sends `poke` to every stream of `account`.
    func send(_ poke: SyncPoke, to account: SyncAccount) {
        let continuations = state.withLock { Array($0.streams[account, default: [:]].values) }
        for continuation in continuations {
            continuation.yield(poke)
        }
    }
}
