#if PostgreSQL
import Synchronization

/// Remembers when a listening connection was last heard from and the last heartbeat it heard,
/// and wakes a heartbeat that waits for one.
final class HeardNotifications: Sendable {
    private struct State {
        var last = ContinuousClock.now
        var beat: UInt64 = 0
        var waiter: (beat: UInt64, continuation: CheckedContinuation<Bool, Never>)?
    }

    private let state = Mutex(State())

    /// When the connection was last heard from: a notification, or the answer to a query; when
    /// it started listening, before either.
    var last: ContinuousClock.Instant {
        state.withLock { $0.last }
    }

    /// A query on the connection was answered.
    func answered() {
        state.withLock { $0.last = .now }
    }

    /// A notification arrived: heartbeat `beat`, or another (`nil`).
    func heard(beat: UInt64?) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            state.last = .now
            if let beat {
                state.beat = max(state.beat, beat)
            }
            guard let waiter = state.waiter, state.beat >= waiter.beat else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: true)
    }

    /// Waits at most `duration` for heartbeat `beat`; returns whether it came.
    func wait(forBeat beat: UInt64, within duration: Duration) async -> Bool {
        let timer = Mutex<Task<Void, Never>?>(nil)
        let cameBack = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    guard state.beat < beat else { return true }
                    state.waiter = (beat, continuation)
                    return false
                }
                if now {
                    return continuation.resume(returning: true)
                }
                timer.withLock {
                    $0 = Task {
                        guard (try? await Task.sleep(for: duration)) != nil else { return }
                        self.giveUp()
                    }
                }
            }
        } onCancel: {
            giveUp()
        }
        timer.withLock { $0?.cancel() }
        return cameBack
    }

    private func giveUp() {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(returning: false)
    }
}
#endif
