import Synchronization

/// The bearer token of one HTTP remote, asked of the app's token source single-flight: the first
/// request asks for a token (`rejected` is `nil`), and when the server refuses token T, one call
/// `token(T)` answers every request that saw T refused.
final class SyncHTTPTokens: Sendable {
    typealias Source = @Sendable (_ rejected: String?) async throws -> String

    private struct State {
        /// The token to send, once one was given.
        var token: String?
        /// The call of the source in flight, and the token it replaces (`nil`: the first).
        var asking: (rejected: String?, answer: Task<String, any Error>)?
    }

    private let source: Source
    private let state = Mutex(State())

    init(source: @escaping Source) {
        self.source = source
    }

    /// The source did not answer within the wait a request gives it. Its call is cancelled,
    /// and the next request asks again.
    struct Late: Error {}

    /// The token to send: the last one given, or the source's first, waited for at most
    /// `limit`.
    ///
    /// - Throws: ``Late`` after `limit`; the source's error; `CancellationError` when the caller
    ///   is cancelled (the source's call goes on for the others that wait for it).
    func current(within limit: Duration) async throws -> String {
        try await token(replacing: nil, within: limit)
    }

    /// A token other than `rejected`, which the server refused: the one another request already
    /// got in its place, or the source's answer to `token(rejected)`, asked once for everyone,
    /// waited for at most `limit`.
    func renewed(after rejected: String, within limit: Duration) async throws -> String {
        try await token(replacing: rejected, within: limit)
    }

    private func token(replacing rejected: String?, within limit: Duration) async throws -> String {
        let next = state.withLock { state -> Next in
            if let token = state.token, token != rejected {
                return .known(token)
            }
            if let asking = state.asking, asking.rejected == rejected || rejected == nil {
                return .asking(asking.answer)
            }
            let answer = Task { [source] in try await source(rejected) }
            state.asking = (rejected, answer)
            return .asking(answer)
        }
        let answer: Task<String, any Error>
        switch next {
        case .known(let token): return token
        case .asking(let asking): answer = asking
        }
        do {
            let token = try await answer.value(within: limit) { Late() }
            state.withLock { state in
                if state.asking?.answer == answer {
                    state.asking = nil
                    state.token = token
                } else if state.asking == nil && state.token == nil {
                    // Another request gave the call up as late, then it answered.
                    state.token = token
                }
            }
            return token
        } catch is CancellationError where Task.isCancelled {
            // This caller gave up; the others still wait for the call.
            throw CancellationError()
        } catch {
            // The next request asks again; a call that is late is given up.
            state.withLock { state in
                if state.asking?.answer == answer { state.asking = nil }
            }
            if error is Late {
                answer.cancel()
            } else if answer.isCancelled {
                // Another request that waited for the same call gave it up as late.
                throw Late()
            }
            throw error
        }
    }

    /// A token known at once, or the source's call to wait for.
    private enum Next {
        case known(String)
        case asking(Task<String, any Error>)
    }
}
