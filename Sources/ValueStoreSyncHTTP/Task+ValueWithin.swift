import Synchronization

extension Task where Failure == any Error {
    /// The task's value, waited for at most `limit`, and only while the waiting task is not
    /// cancelled: the task itself is neither cancelled nor awaited past either, so a caller
    /// never hangs on a task that others share or that ignores cancellation (a token source
    /// stuck on a sign-in screen, a query on a connection whose server stopped answering).
    ///
    /// ```swift
    /// let token = try await asking.value(within: .seconds(30)) { TimedOut() }
    /// ```
    ///
    /// - Parameters:
    ///   - limit: The longest wait.
    ///   - late: The error to throw when `limit` passes first.
    /// - Returns: The task's value, when it comes within `limit`.
    /// - Throws: The task's error; `late()` once `limit` has passed; `CancellationError` when
    ///   the waiting task is cancelled.
    package func value(within limit: Duration, late: @escaping @Sendable () -> any Error) async throws -> Success {
        let outcome = FirstOutcome<Success>()
        let waiting = Task<Void, Never> { outcome.settle(await self.result) }
        let timer = Task<Void, Never> {
            guard (try? await Task<Never, Never>.sleep(for: limit)) != nil else { return }
            outcome.settle(.failure(late()))
        }
        defer {
            waiting.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { outcome.wait(with: $0) }
        } onCancel: {
            outcome.settle(.failure(_Concurrency.CancellationError()))
        }
    }
}

/// The first of several results, handed to the one continuation that waits for it, whichever
/// of the two comes first.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private enum State {
        case open
        case waiting(CheckedContinuation<Value, any Error>)
        case settled(Result<Value, any Error>)
        case done
    }

    private let state = Mutex(State.open)

    /// Hands the result to `continuation`, now if it came already.
    func wait(with continuation: CheckedContinuation<Value, any Error>) {
        let settled = state.withLock { state -> Result<Value, any Error>? in
            guard case .settled(let result) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .done
            return result
        }
        if let settled { continuation.resume(with: settled) }
    }

    /// Takes `result` if no other came first.
    func settle(_ result: Result<Value, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .open:
                state = .settled(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .settled, .done:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
