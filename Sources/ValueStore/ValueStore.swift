/// A place that persists one value of one type: three closures that load, save and remove it.
///
/// A value store is a witness, not a protocol: a struct of `@Sendable` closures that backends build
/// and combinators wrap. Each persisted value gets its own store, so the value's type lives in the
/// store and the compiler rejects a wrong type or a mistyped key.
///
/// ```swift
/// let counter = ValueStore<Void, Int>.inMemory(0)
/// try await counter.save(41)
/// let next = try await counter.update { $0 += 1 }   // 42
/// ```
///
/// Every store obeys the same laws, checked for every backend by ``ValueStoreTesting``:
/// - ``load`` of an absent value throws ``ValueStoreError/notFound``.
/// - After ``save`` of `v`, ``load`` returns `v`; ``save`` returns the value as it was stored.
/// - After ``remove``, ``load`` throws ``ValueStoreError/notFound``; removing an absent value
///   succeeds.
/// - Any other failure (corrupt data, I/O, a locked key) throws a ``ValueStoreError`` that says
///   what went wrong; it is never reported as absence.
///
/// `Environment` is what each operation needs from its caller (a token, a key, a user id); use
/// `Void` when it needs nothing, and ``provide(_:)`` to fix an environment once.
public struct ValueStore<Environment, Value>: Sendable {
    /// Loads the value, or throws ``ValueStoreError/notFound`` when none is stored.
    public var load: @Sendable (_ environment: Environment) async throws -> Value {
        didSet {
            transaction = nil
            immediate.load = nil
        }
    }

    /// Saves the value and returns it as it was stored.
    public var save: @Sendable (_ value: Value, _ environment: Environment) async throws -> Value {
        didSet {
            transaction = nil
            immediate.save = nil
            returnsSavedValue = false
        }
    }

    /// Removes the value; removing an absent value succeeds.
    public var remove: @Sendable (_ environment: Environment) async throws -> Void {
        didSet {
            transaction = nil
            immediate.remove = nil
        }
    }

    /// The backend's exclusive read-modify-write, when it has one; `update` uses it to be atomic.
    ///
    /// Replacing any of the public closures drops it, so `update` never bypasses a closure the
    /// user installed.
    @usableFromInline var transaction: Transaction<Environment, Value>?

    /// What the store is, for error messages: "file '/path/settings.json'".
    @usableFromInline var label: String?

    /// Synchronous forms of the operations, when the backend never blocks; see ``Immediate``.
    ///
    /// Replacing a public closure drops its synchronous form.
    @usableFromInline var immediate = Immediate<Environment, Value>.none

    /// Whether `save` returns exactly the value it was given, as the library's backends do.
    ///
    /// Conversions (`map`, `coded`) then return the value the caller saved instead of converting
    /// the stored form back, which would decode every saved value a second time.
    @usableFromInline var returnsSavedValue = false

    /// Creates a store from its three operations.
    ///
    /// ```swift
    /// let remote = ValueStore<Session, Profile>(
    ///     load: { session in try await session.client.profile() },
    ///     save: { profile, session in try await session.client.put(profile) },
    ///     remove: { session in try await session.client.deleteProfile() }
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - load: Returns the stored value; throws ``ValueStoreError/notFound`` when there is none.
    ///   - save: Stores a value and returns it as stored.
    ///   - remove: Removes the value; succeeds when there is none.
    ///
    /// > Important: A store built this way updates by loading, transforming and saving, which is
    /// > not atomic. The library's backends (``inMemory(_:)`` and the file stores) provide atomic
    /// > updates, and the pass-through combinators keep them atomic.
    @inlinable
    public init(
        load: @escaping @Sendable (_ environment: Environment) async throws -> Value,
        save: @escaping @Sendable (_ value: Value, _ environment: Environment) async throws -> Value,
        remove: @escaping @Sendable (_ environment: Environment) async throws -> Void
    ) {
        self.init(label: nil, transaction: nil, immediate: .none, returnsSavedValue: false, load: load, save: save, remove: remove)
    }

    /// Creates a store that keeps a backend's transaction and description.
    @inlinable
    init(
        label: String?,
        transaction: Transaction<Environment, Value>?,
        immediate: Immediate<Environment, Value>,
        returnsSavedValue: Bool,
        load: @escaping @Sendable (_ environment: Environment) async throws -> Value,
        save: @escaping @Sendable (_ value: Value, _ environment: Environment) async throws -> Value,
        remove: @escaping @Sendable (_ environment: Environment) async throws -> Void
    ) {
        self.load = load
        self.save = save
        self.remove = remove
        self.transaction = transaction
        self.immediate = immediate
        self.label = label
        self.returnsSavedValue = returnsSavedValue
    }
}

extension ValueStore where Environment == Void {
    /// Creates a store whose operations need no environment.
    ///
    /// ```swift
    /// let token = ValueStore<Void, String>(
    ///     load: { try await vault.token() },
    ///     save: { token in try await vault.setToken(token) },
    ///     remove: { try await vault.deleteToken() }
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - load: Returns the stored value; throws ``ValueStoreError/notFound`` when there is none.
    ///   - save: Stores a value and returns it as stored.
    ///   - remove: Removes the value; succeeds when there is none.
    @inlinable
    public init(
        load: @escaping @Sendable () async throws -> Value,
        save: @escaping @Sendable (_ value: Value) async throws -> Value,
        remove: @escaping @Sendable () async throws -> Void
    ) {
        self.init(
            load: { _ in try await load() },
            save: { value, _ in try await save(value) },
            remove: { _ in try await remove() }
        )
    }

    /// Loads the value.
    ///
    /// ```swift
    /// let theme = try await persistence.theme.load()
    /// ```
    ///
    /// - Returns: The stored value.
    /// - Throws: ``ValueStoreError/notFound`` when no value is stored, or the store's failure.
    @inlinable
    public func load() async throws -> Value {
        if let load = immediate.load, let value = try load(()) {
            return value
        }
        return try await load(())
    }

    /// Saves a value.
    ///
    /// ```swift
    /// try await persistence.theme.save(.dark)
    /// ```
    ///
    /// - Parameter value: The value to store.
    /// - Returns: The value as it was stored.
    /// - Throws: The store's failure; the previous value is then still stored.
    @discardableResult
    @inlinable
    public func save(_ value: Value) async throws -> Value {
        if let save = immediate.save, let stored = try save(value, ()) {
            return stored
        }
        return try await save(value, ())
    }

    /// Removes the value. Removing an absent value succeeds.
    ///
    /// ```swift
    /// try await persistence.token.remove()
    /// ```
    ///
    /// - Throws: The store's failure.
    @inlinable
    public func remove() async throws {
        if let remove = immediate.remove, try remove(()) {
            return
        }
        try await remove(())
    }
}
