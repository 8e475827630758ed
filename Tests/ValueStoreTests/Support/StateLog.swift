import Synchronization
import ValueStore

/// Collects the states a store's ``StoredStates`` yields, in a task of its own, so a test can wait
/// for a state with a bounded wait instead of hanging when one never comes.
///
/// A wait ends when the state arrives, not on a poll: ``waitForLast(_:timeout:)`` registers a
/// waiter that the consuming task resumes as it appends the state.
final class StateLog<Value: Sendable>: Sendable {
    private struct State {
        var summaries: [String] = []
        var waiters: [(summary: String, arrival: Arrival<Void>)] = []
    }

    private let state = Shared(State())
    private let consumer = Shared<Task<Void, Never>?>(nil)

    init(_ sequence: StoredStates<Value>) {
        let task = Task { [state] in
            for await stored in sequence {
                Self.record(stored.summary, in: state)
            }
            Self.record("end", in: state)
        }
        consumer.value = task
    }

    deinit {
        cancel()
    }

    private static func record(_ summary: String, in state: Shared<State>) {
        let arrived = state.withLock { state -> [Arrival<Void>] in
            state.summaries.append(summary)
            let arrived = state.waiters.filter { $0.summary == summary }.map(\.arrival)
            state.waiters.removeAll { $0.summary == summary }
            return arrived
        }
        for arrival in arrived {
            arrival.deliver(())
        }
    }

    /// Every state so far, summarized.
    var summaries: [String] { state.withLock { $0.summaries } }

    /// Waits until the newest state is `summary`; returns whether it came within `timeout`.
    @discardableResult
    func waitForLast(_ summary: String, timeout: Duration = .seconds(20)) async -> Bool {
        let arrival = Arrival<Void>()
        let waiting = state.withLock { state -> Bool in
            guard state.summaries.last != summary else { return false }
            state.waiters.append((summary, arrival))
            return true
        }
        guard waiting else { return true }
        return await arrival.wait(timeout: timeout) != nil
    }

    /// Stops consuming, as a cancelled task does.
    func cancel() {
        consumer.value?.cancel()
    }
}

extension StoredState {
    /// `value` for a value, `absent`, or `failed(code)` for a failure.
    var summary: String {
        switch self {
        case .value(let value): "\(value)"
        case .absent: "absent"
        case .failed(let error as ValueStoreError): "failed(\(error.code.rawValue))"
        case .failed(let error): "failed(\(error))"
        }
    }
}

/// Polls `condition` every few milliseconds until it holds or `timeout` passes; a bound against
/// hanging, never a measure of speed. Only for what sends no event: a live watcher's thread
/// closing, a cache emptied by its own task, a process's write seen by the kernel. Prefer a
/// ``StateLog`` or ``FakeWatches``.
func eventually(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        // A poll, not a wait for an event: what these conditions read sends none (a live
        // watcher's thread closing, a cache emptied by its own task, a process's write seen by
        // the kernel), so only looking again can see it change.
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}
