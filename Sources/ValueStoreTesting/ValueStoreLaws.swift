public import ValueStore

/// Checks that a store obeys the laws every value store must satisfy.
///
/// The check works with any test framework: it returns normally when the store is lawful and
/// throws a ``StoreLawViolation`` that names the broken law otherwise.
///
/// ```swift
/// @Test func settingsFileIsLawful() async throws {
///     try await ValueStoreLaws.check(.jsonFile(url), samples: Settings.a, Settings.b)
/// }
/// ```
///
/// The laws:
/// - **Double remove**: removing twice succeeds, whether or not a value was stored.
/// - **Absent is notFound**: loading after a remove throws `ValueStoreError.notFound`, not
///   another error and not a value.
/// - **Round trip**: after saving a value, loading returns it; saving another replaces it.
/// - **Save returns**: `save` returns what a following `load` returns.
/// - **Immediate agrees**: when the store has a `loadImmediately` and it answers, it returns
///   what `load` returns, and after a remove it throws `ValueStoreError.notFound`.
///
/// > Important: The check saves and removes values: give it a store over scratch space. It
/// > leaves the store empty.
public enum ValueStoreLaws {
    /// Checks the laws on a store that needs an environment.
    ///
    /// ```swift
    /// try await ValueStoreLaws.check(profiles, environment: session, samples: alice, bob)
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store to check; its value is replaced and removed.
    ///   - environment: The environment every operation receives.
    ///   - first: A value to save.
    ///   - second: Another value to save, different from `first`.
    /// - Throws: ``StoreLawViolation`` naming the first law the store breaks and what the store
    ///   did, including any error it threw.
    public static func check<Environment, Value: Equatable & Sendable>(
        _ store: ValueStore<Environment, Value>,
        environment: Environment,
        samples first: Value,
        _ second: Value
    ) async throws {
        guard first != second else {
            throw StoreLawViolation(law: "samples", details: "the two samples must differ, both are \(first)")
        }
        try await attempt("double remove", "removing before the check") {
            try await store.remove(environment)
        }
        try await expectRemove(store, environment: environment, law: "double remove")
        try await expectAbsent(store, environment: environment, law: "absent is notFound")

        for sample in [first, second] {
            let returned = try await attempt("round trip", "saving \(sample)") {
                try await store.save(sample, environment)
            }
            let loaded = try await attempt("round trip", "loading after saving \(sample)") {
                try await store.load(environment)
            }
            if loaded != sample {
                throw StoreLawViolation(
                    law: "round trip",
                    details: "saved \(sample) but loaded \(loaded)"
                )
            }
            if returned != loaded {
                throw StoreLawViolation(
                    law: "save returns",
                    details: "save returned \(returned) but load returned \(loaded)"
                )
            }
            let immediate = try await attempt("immediate agrees", "loading immediately after saving \(sample)") {
                try store.loadImmediately?(environment)
            }
            if let immediate, immediate != loaded {
                throw StoreLawViolation(
                    law: "immediate agrees",
                    details: "loadImmediately returned \(immediate) but load returned \(loaded)"
                )
            }
        }

        try await attempt("round trip", "removing a saved value") {
            try await store.remove(environment)
        }
        try await expectAbsent(store, environment: environment, law: "absent is notFound")
        try await expectRemove(store, environment: environment, law: "double remove")
    }

    /// Checks the laws on a store that needs no environment.
    ///
    /// ```swift
    /// try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory(), samples: 1, 2)
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store to check; its value is replaced and removed.
    ///   - first: A value to save.
    ///   - second: Another value to save, different from `first`.
    /// - Throws: ``StoreLawViolation`` naming the first law the store breaks and what the store
    ///   did, including any error it threw.
    public static func check<Value: Equatable & Sendable>(
        _ store: ValueStore<Void, Value>,
        samples first: Value,
        _ second: Value
    ) async throws {
        try await check(store, environment: (), samples: first, second)
    }

    /// Runs one step of a law, reporting a thrown error as a violation of that law.
    private static func attempt<Result>(
        _ law: String,
        _ step: String,
        _ operation: () async throws -> Result
    ) async throws -> Result {
        do {
            return try await operation()
        } catch {
            throw StoreLawViolation(law: law, details: "\(step) threw \(error)")
        }
    }

    private static func expectRemove<Environment, Value>(
        _ store: ValueStore<Environment, Value>,
        environment: Environment,
        law: String
    ) async throws {
        try await attempt(law, "removing an absent value") {
            try await store.remove(environment)
        }
    }

    private static func expectAbsent<Environment, Value>(
        _ store: ValueStore<Environment, Value>,
        environment: Environment,
        law: String
    ) async throws {
        let loaded: Value
        do {
            loaded = try await store.load(environment)
        } catch ValueStoreError.notFound {
            try expectAbsentImmediately(store, environment: environment)
            return
        } catch {
            throw StoreLawViolation(law: law, details: "loading after a remove threw \(error), not notFound")
        }
        throw StoreLawViolation(law: law, details: "loading after a remove returned \(loaded)")
    }

    /// After a remove, `loadImmediately` throws `notFound` or defers to `load`.
    private static func expectAbsentImmediately<Environment, Value>(
        _ store: ValueStore<Environment, Value>,
        environment: Environment
    ) throws {
        let immediate: Value?
        do {
            immediate = try store.loadImmediately?(environment) ?? nil
        } catch ValueStoreError.notFound {
            return
        } catch {
            throw StoreLawViolation(
                law: "immediate agrees", details: "loadImmediately after a remove threw \(error), not notFound")
        }
        if let immediate {
            throw StoreLawViolation(
                law: "immediate agrees", details: "loadImmediately after a remove returned \(immediate)")
        }
    }
}
