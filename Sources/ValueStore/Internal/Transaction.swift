/// A backend's exclusive read-modify-write: the hook that makes `update` atomic.
///
/// A backend runs `body` with the current value (`nil` when absent) while no other writer can
/// interleave: under its lock, and for files under an advisory lock shared with other processes.
/// `body` may change the value, or set it to `nil` to remove it; the backend then stores the
/// result and returns it. If `body` throws, nothing is written and the error propagates unchanged.
///
/// Combinators that pass values through lift the transaction (`map`, `default`, `pullback`, …),
/// so `update` through them stays atomic. It is internal: users reach it only through `update`.
///
/// `run` is `nonisolated(nonsending)` so that `body`, which wraps the caller's transform, runs on
/// the caller's executor and may capture the caller's non-Sendable state. Backends hop off that
/// executor for blocking work themselves.
@usableFromInline
struct Transaction<Environment, Value>: Sendable {
    @usableFromInline typealias Body = (_ value: inout Value?) throws -> Void

    @usableFromInline typealias Run = nonisolated(nonsending) @Sendable (
        _ environment: Environment,
        _ body: Body
    ) async throws -> Value?

    @usableFromInline let run: Run

    @inlinable
    init(run: @escaping Run) {
        self.run = run
    }
}

extension Transaction {
    /// The same transaction, reading the environment from a wider one.
    @inlinable
    func pullback<Outer>(
        _ transform: @escaping @Sendable (Outer) throws -> Environment
    ) -> Transaction<Outer, Value> {
        Transaction<Outer, Value> { environment, body in
            try await run(transform(environment), body)
        }
    }

    /// The same transaction over a converted value.
    ///
    /// It returns the value `body` left when the backend stores exactly what it is given, and
    /// otherwise converts back what was stored, as `save` does.
    @inlinable
    func map<New>(
        load: @escaping @Sendable (Value) throws -> New,
        save: @escaping @Sendable (New) throws -> Value,
        returnsSavedValue: Bool
    ) -> Transaction<Environment, New> {
        Transaction<Environment, New> { environment, body in
            var result: New?
            let stored = try await run(environment) { base in
                var value = try base.map(load)
                try body(&value)
                base = try value.map(save)
                result = value
            }
            return returnsSavedValue ? result : try stored.map(load)
        }
    }

    /// The same transaction, replacing the errors the backend throws; errors thrown by `body`
    /// pass through unchanged.
    @inlinable
    func mapError(
        _ transform: @escaping @Sendable (any Error) -> any Error
    ) -> Self {
        Self { environment, body in
            do {
                return try await run(environment) { value in
                    do {
                        try body(&value)
                    } catch {
                        throw BodyFailure(error: error)
                    }
                }
            } catch let failure as BodyFailure {
                throw failure.error
            } catch {
                throw transform(error)
            }
        }
    }

    /// The same transaction, seeing `defaultValue` where nothing is stored.
    @inlinable
    func defaulting(to defaultValue: Value) -> Self where Value: Sendable {
        Self { environment, body in
            let stored = try await run(environment) { base in
                var value: Value? = base ?? defaultValue
                try body(&value)
                base = value
            }
            return stored ?? defaultValue
        }
    }

    /// The same transaction over an optional value that is `nil` where nothing is stored.
    @inlinable
    func optional() -> Transaction<Environment, Value?> {
        Transaction<Environment, Value?> { environment, body in
            let stored = try await run(environment) { base in
                var value: Value?? = .some(base)
                try body(&value)
                base = value ?? nil
            }
            return .some(stored)
        }
    }
}

/// Carries an error thrown by a transaction's body past an error-mapping layer.
@usableFromInline
struct BodyFailure: Error {
    @usableFromInline let error: any Error

    @inlinable
    init(error: any Error) {
        self.error = error
    }
}
