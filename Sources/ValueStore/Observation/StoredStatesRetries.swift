import Synchronization

/// The wake-ups of a ``StoredStates`` iterator after its first failure: the store's signals,
/// merged with retries that come on their own, after a backoff, while loads keep failing.
final class StoredStatesRetries: Sendable {
    /// Why the iterator wakes.
    enum Wakeup: Sendable {
        case signal
        case retry
    }

    /// The first retry's delay, doubled after each failure up to ``longestDelay``.
    static let firstDelay = Duration.milliseconds(100)
    static let longestDelay = Duration.seconds(5)

    private struct State {
        var delay = StoredStatesRetries.firstDelay
        var timer: Task<Void, Never>?
    }

    let wakeups: AsyncStream<Wakeup>
    private let continuation: AsyncStream<Wakeup>.Continuation
    private let forwarding: Task<Void, Never>
    private let state = Mutex(State())
    /// Whether a signal came since the iterator last woke: the wake-up buffer keeps one element,
    /// so a retry may replace a signal there, but the signal still counts.
    private let signalled = Flag()

    /// A flag the forwarding task sets, apart from this object so the task does not keep it.
    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Starts reading `signals`, which nothing else reads from now on.
    init(signals: AsyncStream<Void>) {
        let (wakeups, continuation) = AsyncStream<Wakeup>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.wakeups = wakeups
        self.continuation = continuation
        let signalled = signalled
        forwarding = Task {
            for await _ in signals {
                signalled.value.store(true, ordering: .releasing)
                continuation.yield(.signal)
            }
            continuation.finish()
        }
    }

    deinit {
        forwarding.cancel()
        state.withLock { $0.timer?.cancel() }
        continuation.finish()
    }

    /// Whether a signal came since the last call: the wake-up was a signal's, whatever the
    /// buffer held.
    func tookSignal() -> Bool {
        signalled.value.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// A load failed: a retry comes after the current delay, which doubles.
    func failed() {
        let continuation = continuation
        state.withLock { state in
            state.timer?.cancel()
            let delay = state.delay
            state.delay = min(state.delay * 2, Self.longestDelay)
            state.timer = Task {
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return  // replaced, or the iterator went away
                }
                continuation.yield(.retry)
            }
        }
    }

    /// A load succeeded: no retry is due, and the next failure's starts short again.
    func succeeded() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
            state.delay = Self.firstDelay
        }
    }

    /// Whether two failures are the same for a stream's consumer: the same code of the same
    /// store, or the same error.
    static func isSame(_ first: any Error, _ second: any Error) -> Bool {
        if let first = first as? ValueStoreError, let second = second as? ValueStoreError {
            return first.code == second.code && first.store == second.store
        }
        return type(of: first) == type(of: second) && "\(first)" == "\(second)"
    }
}
