/// Something that arrives once, awaited with a bound against hanging: the one place the tests
/// wait for an event with a timeout.
///
/// ```swift
/// let reply = Arrival<String>()
/// Task { reply.deliver(try await server.answer()) }
/// #expect(await reply.wait() == "ok")
/// ```
final class Arrival<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiter: CheckedContinuation<Value?, Never>?
    }

    private let state = Shared(State())

    /// Hands `value` to the waiter, at once; only the first delivery counts.
    func deliver(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The delivered value, as soon as it arrives; `nil` when it has not arrived within
    /// `timeout`. One waiter at a time.
    func wait(timeout: Duration = .seconds(20)) async -> Value? {
        let state = self.state
        let bound = Shared<Task<Void, Never>?>(nil)
        defer { bound.value?.cancel() }
        return await withCheckedContinuation { continuation in
            let arrived = state.withLock { state -> Value? in
                if state.value == nil { state.waiter = continuation }
                return state.value
            }
            if let arrived {
                continuation.resume(returning: arrived)
                return
            }
            bound.value = Task {
                // A bound against hanging, never a measure of speed: a missing event sends
                // nothing, so only the passing of time can end this wait.
                try? await Task.sleep(for: timeout)
                state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }?.resume(returning: nil)
            }
        }
    }
}

/// Runs `operation` in a task of its own and waits for it at most `timeout`: its result, or `nil`
/// when it has not finished, so a test of something that used to hang fails instead of hanging.
/// A bound against hanging, never a measure of speed.
///
/// ```swift
/// let outcome = await unlessItHangs { try await a.move(to: b) }
/// #expect(outcome != nil, "the move finished")
/// ```
func unlessItHangs<Value: Sendable>(
    timeout: Duration = .seconds(20),
    _ operation: @escaping @Sendable () async throws -> Value
) async -> Result<Value, any Error>? {
    let outcome = Arrival<Result<Value, any Error>>()
    Task {
        do {
            outcome.deliver(.success(try await operation()))
        } catch {
            outcome.deliver(.failure(error))
        }
    }
    return await outcome.wait(timeout: timeout)
}
