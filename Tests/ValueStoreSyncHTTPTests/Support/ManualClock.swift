import Synchronization

/// A clock whose time moves only when its test calls ``advance(by:)``: a wait measured on it
/// ends then, never because the machine was slow.
///
/// ```swift
/// let clock = ManualClock()
/// options.timings.clock = clock
/// clock.advance(by: .seconds(7))
/// await clock.untilSomeoneSleepsPastNow()
/// ```
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var sinceStart: Duration

        func advanced(by duration: Duration) -> Self { Self(sinceStart: sinceStart + duration) }
        func duration(to other: Self) -> Duration { other.sinceStart - sinceStart }
        static func < (left: Self, right: Self) -> Bool { left.sinceStart < right.sinceStart }
    }

    private struct Sleeper {
        let deadline: Instant
        let wake: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(sinceStart: .zero)
        /// Every sleeper's deadline is after `now`.
        var sleepers: [Int: Sleeper] = [:]
        var nextSleeper = 0
        /// Told of each new sleeper, for ``untilSomeoneSleepsPastNow()``.
        var watchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextSleeper += 1 }
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (wake: CheckedContinuation<Void, any Error>) in
                let (asleep, watchers) = state.withLock { state in
                    guard deadline > state.now, !Task.isCancelled else {
                        return (false, [CheckedContinuation<Void, Never>]())
                    }
                    state.sleepers[id] = Sleeper(deadline: deadline, wake: wake)
                    defer { state.watchers = [] }
                    return (true, state.watchers)
                }
                for watcher in watchers { watcher.resume() }
                guard !asleep else { return }
                if Task.isCancelled { wake.resume(throwing: CancellationError()) } else { wake.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.wake.resume(throwing: CancellationError())
        }
    }

    /// Moves the time on by `duration`, waking every sleeper whose deadline it reaches.
    func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.map(\.wake)
        }
        for wake in due { wake.resume() }
    }

    /// Returns once some task sleeps on this clock, until a time after now: a sleeper is kept
    /// only while its deadline is ahead (``advance(by:)`` wakes the others), so after an advance,
    /// the sign that whoever woke has chosen to wait on rather than give up.
    func untilSomeoneSleepsPastNow() async {
        await withCheckedContinuation { watcher in
            let asleep = state.withLock { state in
                guard state.sleepers.isEmpty else { return true }
                state.watchers.append(watcher)
                return false
            }
            if asleep { watcher.resume() }
        }
    }
}
