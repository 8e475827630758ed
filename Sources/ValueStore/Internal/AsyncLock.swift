/// A first-come, first-served lock for async code: waiters suspend instead of blocking a thread.
///
/// Acquiring a free lock does not suspend. Waiting is not cancellable: a task that asked for the
/// lock gets it, so that a cancelled waiter never leaves a store half-locked.
///
/// `package`: a sync replica (`ValueStoreSync`) runs one sync round at a time with it.
package final class AsyncLock: Sendable {
    private struct State {
        var isLocked = false
        var waiters: [UnsafeContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    package init() {}

    /// Runs `body` while holding the lock.
    nonisolated(nonsending) package func withLock<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        await lock()
        defer { unlock() }
        return try await body()
    }

    nonisolated(nonsending) func lock() async {
        let acquired = state.withLock { state in
            guard !state.isLocked else { return false }
            state.isLocked = true
            return true
        }
        if acquired {
            return
        }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                guard !state.isLocked else {
                    state.waiters.append(continuation)
                    return false
                }
                state.isLocked = true
                return true
            }
            if acquired {
                continuation.resume()
            }
        }
    }

    /// Releases the lock, handing it straight to the longest waiter if there is one.
    func unlock() {
        let next = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.isLocked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
