/// Synchronous forms of a store's operations, for stores whose work never blocks or suspends:
/// in-memory and constant stores, and a cache hit.
///
/// Every async call costs tens of nanoseconds, so a chain of combinators that each wrapped the
/// one below in another async closure would cost that much per layer. Instead, combinators
/// compose these synchronous forms as plain closures, and each store's async operation tries
/// its composed synchronous form first: a whole chain then costs one async call.
///
/// Each operation returns `nil` (or `false`) when it cannot answer now, such as a cache miss;
/// the caller then takes the async path. Backends that block (files) provide none, so their
/// work stays in their async closures, off the caller's executor.
@usableFromInline
struct Immediate<Environment, Value>: Sendable {
    @usableFromInline typealias Load = @Sendable (_ environment: Environment) throws -> Value?
    @usableFromInline typealias Save = @Sendable (_ value: Value, _ environment: Environment) throws -> Value?
    @usableFromInline typealias Remove = @Sendable (_ environment: Environment) throws -> Bool

    @usableFromInline var load: Load?
    @usableFromInline var save: Save?
    @usableFromInline var remove: Remove?

    @inlinable
    init(load: Load? = nil, save: Save? = nil, remove: Remove? = nil) {
        self.load = load
        self.save = save
        self.remove = remove
    }

    /// No synchronous forms: every operation takes the async path.
    @inlinable
    static var none: Self { Self() }
}

// MARK: - Async operations that try the synchronous form first

extension Immediate {
    @inlinable
    func loading(
        _ fallback: @escaping @Sendable (_ environment: Environment) async throws -> Value
    ) -> @Sendable (_ environment: Environment) async throws -> Value {
        guard let load else { return fallback }
        return { environment in
            if let value = try load(environment) {
                return value
            }
            return try await fallback(environment)
        }
    }

    @inlinable
    func saving(
        _ fallback: @escaping @Sendable (_ value: Value, _ environment: Environment) async throws -> Value
    ) -> @Sendable (_ value: Value, _ environment: Environment) async throws -> Value {
        guard let save else { return fallback }
        return { value, environment in
            if let stored = try save(value, environment) {
                return stored
            }
            return try await fallback(value, environment)
        }
    }

    @inlinable
    func removing(
        _ fallback: @escaping @Sendable (_ environment: Environment) async throws -> Void
    ) -> @Sendable (_ environment: Environment) async throws -> Void {
        guard let remove else { return fallback }
        return { environment in
            if try remove(environment) {
                return
            }
            try await fallback(environment)
        }
    }
}

// MARK: - Lifting through combinators

extension Immediate {
    @inlinable
    func pullback<Outer>(
        _ transform: @escaping @Sendable (Outer) throws -> Environment
    ) -> Immediate<Outer, Value> {
        var lifted = Immediate<Outer, Value>()
        if let load {
            lifted.load = { environment in try load(transform(environment)) }
        }
        if let save {
            lifted.save = { value, environment in try save(value, transform(environment)) }
        }
        if let remove {
            lifted.remove = { environment in try remove(transform(environment)) }
        }
        return lifted
    }

    @inlinable
    func map<New>(
        load convertLoaded: @escaping @Sendable (Value) throws -> New,
        save convertSaved: @escaping @Sendable (New) throws -> Value,
        returnsSavedValue: Bool
    ) -> Immediate<Environment, New> {
        var lifted = Immediate<Environment, New>(remove: remove)
        if let load {
            lifted.load = { environment in
                guard let value = try load(environment) else { return nil }
                return try convertLoaded(value)
            }
        }
        if let save {
            lifted.save = { value, environment in
                guard let stored = try save(convertSaved(value), environment) else { return nil }
                return returnsSavedValue ? value : try convertLoaded(stored)
            }
        }
        return lifted
    }

    @inlinable
    func mapError(_ transform: @escaping @Sendable (any Error) -> any Error) -> Self {
        var lifted = Self()
        if let load {
            lifted.load = { environment in
                do {
                    return try load(environment)
                } catch {
                    throw transform(error)
                }
            }
        }
        if let save {
            lifted.save = { value, environment in
                do {
                    return try save(value, environment)
                } catch {
                    throw transform(error)
                }
            }
        }
        if let remove {
            lifted.remove = { environment in
                do {
                    return try remove(environment)
                } catch {
                    throw transform(error)
                }
            }
        }
        return lifted
    }

    @inlinable
    func defaulting(to defaultValue: Value) -> Self where Value: Sendable {
        var lifted = Self(save: save, remove: remove)
        if let load {
            lifted.load = { environment in
                do {
                    return try load(environment)
                } catch ValueStoreError.notFound {
                    return defaultValue
                }
            }
        }
        return lifted
    }

    @inlinable
    func optional() -> Immediate<Environment, Value?> {
        var lifted = Immediate<Environment, Value?>(remove: remove)
        if let load {
            lifted.load = { environment in
                do {
                    guard let value = try load(environment) else { return nil }
                    return .some(value)
                } catch ValueStoreError.notFound {
                    return .some(nil)
                }
            }
        }
        if let save, let remove {
            lifted.save = { value, environment in
                guard let value else {
                    return try remove(environment) ? .some(nil) : nil
                }
                guard let stored = try save(value, environment) else { return nil }
                return .some(stored)
            }
        }
        return lifted
    }
}
