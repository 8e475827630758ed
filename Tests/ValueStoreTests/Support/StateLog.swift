import Synchronization
import ValueStore

/// Collects the states a store's ``StoredStates`` yields, in a task of its own, so a test can wait
/// for a state with a bounded wait instead of hanging when one never comes.
final class StateLog<Value: Sendable>: Sendable {
    private let states = Shared<[String]>([])
    private let consumer = Shared<Task<Void, Never>?>(nil)

    init(_ sequence: StoredStates<Value>) {
        let task = Task { [states] in
            for await state in sequence {
                states.append(state.summary)
            }
            states.append("end")
        }
        consumer.value = task
    }

    deinit {
        cancel()
    }

    /// Every state so far, summarized.
    var summaries: [String] { states.value }

    /// Waits until the newest state is `summary`; returns whether it came within `timeout`.
    @discardableResult
    func waitForLast(_ summary: String, timeout: Duration = .seconds(20)) async -> Bool {
        await eventually(timeout: timeout) { self.summaries.last == summary }
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
/// hanging, never a measure of speed.
func eventually(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}
