import Foundation
import Synchronization

/// What `body` returns, or a failure that names `what` once `limit` has passed: a test that waits
/// for a delivery fails by name instead of hanging `swift test`.
///
/// ```swift
/// let seen = try await within(.seconds(20), "the laptop's stream showing the phone's save") {
///     for await state in states where state.value == "dark" { return state.value }
///     return nil
/// }
/// ```
///
/// The body runs in a task of its own, cancelled at the limit; one that does not heed
/// cancellation goes on, detached, and the test still ends.
public func within<Result: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let work = Task { try await body() }
    let first = FirstOutcome<Result>()
    let timer = Task {
        try await Task.sleep(for: limit)
        work.cancel()
        first.resume(with: .failure(TookTooLong(what: what, limit: limit)))
    }
    defer { timer.cancel() }
    return try await withCheckedThrowingContinuation { continuation in
        first.set(continuation)
        Task { first.resume(with: await work.result) }
    }
}

/// A bounded wait that ran out.
public struct TookTooLong: Error, CustomStringConvertible {
    /// What the test waited for.
    public var what: String
    /// How long it waited.
    public var limit: Duration
    /// The failure, naming what never came.
    public var description: String { "waited \(limit) for \(what)" }
}

/// A continuation that the first outcome resumes; later ones find it taken.
private final class FirstOutcome<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var early: Swift.Result<Result, any Error>?
    }

    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<Result, any Error>) {
        let early = state.withLock { state in
            if state.early == nil { state.continuation = continuation }
            return state.early
        }
        if let early { continuation.resume(with: early) }
    }

    func resume(with outcome: Swift.Result<Result, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result, any Error>? in
            if let continuation = state.continuation {
                state.continuation = nil
                state.early = outcome  // taken: later outcomes are dropped
                return continuation
            }
            if state.early == nil { state.early = outcome }
            return nil
        }
        continuation?.resume(with: outcome)
    }
}
