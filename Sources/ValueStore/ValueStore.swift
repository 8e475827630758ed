/// A place that persists one value of one type: closures that load, save, remove and update it.
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
/// Every store obeys the same laws, checked for every backend by `ValueStoreLaws` in the
/// `ValueStoreTesting` library:
/// - ``load`` of an absent value throws ``ValueStoreError/notFound``.
/// - After ``save`` of `v`, ``load`` returns `v`; ``save`` returns the value as it was stored.
/// - After ``remove``, ``load`` throws ``ValueStoreError/notFound``; removing an absent value
///   succeeds.
/// - ``update`` reads, changes and writes the value as one step where the backend can make it
///   atomic.
/// - Any other failure (corrupt data, I/O, a locked key) throws a ``ValueStoreError`` that says
///   what went wrong; it is never reported as absence.
///
/// `Environment` is what each operation needs from its caller (a token, a key, a user id); use
/// `Void` when it needs nothing, and ``provide(_:)`` to fix an environment once.
///
/// ## Executors
///
/// Every closure is `nonisolated(nonsending)`: it runs on the caller's executor, so a load from
/// the main actor does not hop to another thread and back. Work that blocks (file I/O, `fsync`,
/// lock waits, key derivation) never runs there: the library's backends move it to the global
/// concurrent executor with `@concurrent` functions. A store you write yourself must do the same;
/// see ``init(label:load:loadImmediately:save:remove:update:changeSignals:)``.
public struct ValueStore<Environment, Value>: Sendable {
    /// Loads the value; throws ``ValueStoreError/notFound`` when none is stored.
    public typealias Load =
        nonisolated(nonsending) @Sendable (
            _ environment: Environment
        ) async throws -> Value

    /// Saves a value and returns it as it was stored.
    public typealias Save =
        nonisolated(nonsending) @Sendable (
            _ value: Value,
            _ environment: Environment
        ) async throws -> Value

    /// Removes the value; removing an absent value succeeds.
    public typealias Remove =
        nonisolated(nonsending) @Sendable (
            _ environment: Environment
        ) async throws -> Void

    /// Loads the value without suspending, when the store can answer from memory.
    ///
    /// It returns the value, throws what ``load`` would throw (``ValueStoreError/notFound`` for
    /// absence), or returns `nil` to say "ask ``load``".
    public typealias LoadImmediately =
        @Sendable (
            _ environment: Environment
        ) throws -> Value?

    /// Reads the value, lets `body` change it, and writes the result, as one step.
    ///
    /// `body` sees the current value, or `nil` when none is stored. It may change it, or set it
    /// to `nil` to remove it. The closure then stores the result and returns what it stored
    /// (`nil`: nothing). If `body` throws, nothing is written and its error propagates unchanged.
    ///
    /// `body` runs on the caller's executor, inside the store's transaction, and may await other
    /// work there: ``replacing(_:)`` reads the old store inside the new one's transaction. The
    /// library's backends hold no lock while it runs, and run it again when another writer
    /// changed the value before they could commit, so keep it short and keep its side effects out
    /// of the store. Never write to the same store from it: file stores throw
    /// ``ValueStoreError/Code/nestedWrite``.
    public typealias Update =
        nonisolated(nonsending) @Sendable (
            _ environment: Environment,
            _ body: (_ value: inout Value?) async throws -> Void
        ) async throws -> Value?

    /// Starts a stream of change signals: one element each time the stored value may have
    /// changed, for as long as the consumer iterates.
    ///
    /// ``changes(environment:)`` builds on it: after each signal it loads the value again. A
    /// signal carries nothing; it only says "load again". Streams should buffer only the newest
    /// signal (`.bufferingNewest(1)`), and stop watching in their `onTermination`.
    public typealias ChangeSignals =
        @Sendable (
            _ environment: Environment
        ) -> AsyncStream<Void>

    /// What the store is, for error messages and logs: "file '/path/settings.json'".
    ///
    /// Combinators keep the label of the store they wrap.
    public var label: String

    /// Whether every value the store holds is a secret: `true` for the encrypted stores
    /// (`encryptedFile`, whatever its key and environment), `false` otherwise.
    ///
    /// ```swift
    /// let token = ValueStore<Void, Data>.encryptedFile(url, vault: vault).map(load: { $0 }, save: { $0 })
    /// token.holdsSecrets  // true
    /// ```
    ///
    /// Combinators keep it, as they keep ``label``; set it on a store of your own that holds
    /// secrets. Whatever reports values, such as a configuration provider's access log, redacts
    /// those of a store that holds secrets.
    public var holdsSecrets = false

    /// Loads the value, or throws ``ValueStoreError/notFound`` when none is stored.
    ///
    /// > Important: When you assign a new `load`, set ``loadImmediately`` to `nil` or replace it
    /// > too: combinators built on the store try ``loadImmediately`` first. Or build a new store
    /// > with
    /// > ``init(label:load:loadImmediately:save:remove:update:changeSignals:)``,
    /// > which takes both.
    public var load: Load

    /// Saves the value and returns it as it was stored.
    ///
    /// ``save(_:)`` runs the closure you assign: a store with a faster way to save (the in-memory
    /// store saves without an async call) drops it when you assign a new `save`.
    ///
    /// > Important: Each closure is independent. Assigning a new `save` does not change
    /// > ``update``, which keeps writing the way it did. When you replace `save` or ``remove``,
    /// > replace ``update`` too, or build a new store with
    /// > ``init(label:load:loadImmediately:save:remove:update:changeSignals:)``,
    /// > which derives `update` from the closures you give it.
    @inlinable
    public var save: Save {
        get { saveClosure }
        set {
            saveClosure = newValue
            saveImmediately = nil
        }
    }

    /// The closure behind ``save``.
    @usableFromInline
    var saveClosure: Save

    /// Saves without suspending, for a store that can (``inMemory(_:)``), or `nil`; it must do
    /// what ``save`` does. ``save(_:)`` tries it first: an async closure call costs an async
    /// frame from the task allocator, which is most of an in-memory save. Assigning ``save``
    /// sets it to `nil`, so a replaced `save` is never bypassed.
    @usableFromInline
    var saveImmediately: (@Sendable (_ value: Value, _ environment: Environment) throws -> Value)? = nil

    /// Removes the value; removing an absent value succeeds.
    public var remove: Remove

    /// The store's read-modify-write, which ``update(environment:_:)`` and ``set(_:environment:)``
    /// build on.
    ///
    /// The library's backends make it atomic: the in-memory store and file stores commit only
    /// if no other writer changed the value since they read it, file stores under a per-path lock
    /// and an advisory file lock shared with other processes, and otherwise run the body again. Combinators
    /// that pass values through (``map(load:save:)-((Value)->NewValue,_)``, ``coded(_:)``,
    /// ``default(_:)``, ``optional()``, ``mapError(_:)``, `pullback(_:)`, ``provide(_:)``,
    /// ``replacing(_:)``, ``cached()``, ``versioned(_:legacyVersion:)``, and the asynchronous
    /// ``map(load:save:)-(,_)``) lift it, so it stays atomic through them.
    public var update: Update

    /// Signals each change to the stored value, which ``changes(environment:)`` turns into a
    /// stream of states.
    ///
    /// ```swift
    /// for await _ in settings.changeSignals(()) {
    ///     print("settings changed")
    /// }
    /// ```
    ///
    /// What it sees depends on the store:
    /// - File stores (``file(_:options:)``, ``jsonFile(_:encoder:decoder:options:)``, the
    ///   encrypted ones) signal every write by any store over the same path in this process, and
    ///   writes by other processes (inotify on Linux, a dispatch source on Apple platforms).
    /// - Combinators pass their base store's signals through.
    /// - A store built with
    ///   ``init(label:load:loadImmediately:save:remove:update:changeSignals:)``
    ///   and no `changeSignals` signals the saves, removes and updates made through that store
    ///   value and its copies, and nothing else; give it your backend's own source to see more.
    public var changeSignals: ChangeSignals

    /// The store's synchronous fast path for loads, or `nil` when it has none.
    ///
    /// ```swift
    /// let theme = ValueStore<Void, String>.inMemory("dark").default("light")
    /// let now = try theme.loadImmediately?(())   // "dark", without an await
    /// ```
    ///
    /// ``inMemory(_:)`` answers every load this way, and ``cached()`` answers its hits.
    /// Combinators that only convert (``map(load:save:)-((Value)->NewValue,_)``, ``coded(_:)``,
    /// ``mapError(_:)``, ``default(_:)``, ``optional()``, `pullback(_:)`, ``provide(_:)``,
    /// ``require(_:)``) compose it, and their ``load`` tries it first. So a chain of them over an
    /// in-memory store or a cache hit loads with one async call in all, instead of one per
    /// layer. It returns `nil` when the store must wait (a cache miss, a file), and then ``load``
    /// runs as usual.
    ///
    /// A backend passes it to the initializer beside ``load``; a store built without one has
    /// none.
    ///
    /// > Important: It must agree with ``load``. When you replace ``load`` on an existing store,
    /// > set `loadImmediately` to `nil` or replace it too: combinators built on the store prefer
    /// > it.
    public var loadImmediately: LoadImmediately? = nil

    /// Creates a store from its operations.
    ///
    /// ```swift
    /// let remote = ValueStore<Session, Profile>(
    ///     label: "profile service",
    ///     load: { session in try await session.client.profile() },
    ///     save: { profile, session in try await session.client.put(profile) },
    ///     remove: { session in try await session.client.deleteProfile() }
    /// )
    /// ```
    ///
    /// The closures run on the caller's executor, which may be the main actor. Move blocking work
    /// off it with a `@concurrent` function:
    ///
    /// ```swift
    /// @concurrent func readBlob(at path: String) async throws -> Data {
    ///     try Data(contentsOf: URL(filePath: path))   // blocks, so never on the caller's executor
    /// }
    /// ```
    ///
    /// Without `changeSignals`, the store reports the saves, removes and updates made through it,
    /// and through its copies, to ``changes(environment:)``; changes made any other way are not
    /// seen. Give `changeSignals` when the backend can tell when its value changes (a database's
    /// change feed, a server's push channel), and in combinators, to pass their base store's
    /// signals through; the closures are then used as given, and saves through this store are
    /// reported only if `changeSignals` reports them:
    ///
    /// ```swift
    /// let shared = ValueStore<Void, Int>(
    ///     label: "shared counter",
    ///     load: { _ in try await counter.load() },
    ///     save: { value, _ in try await counter.save(value) },
    ///     remove: { _ in try await counter.remove() },
    ///     update: { _, body in try await counter.update((), body) },
    ///     changeSignals: counter.changeSignals
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - label: What the store is, for error messages; by default the value's type.
    ///   - load: Returns the stored value; throws ``ValueStoreError/notFound`` when there is none.
    ///   - loadImmediately: Answers a load without suspending when the backend can (see
    ///     ``loadImmediately``); it must agree with `load`. By default the store has none.
    ///   - save: Stores a value and returns it as stored.
    ///   - remove: Removes the value; succeeds when there is none.
    ///   - update: The backend's atomic read-modify-write, if it has one (see ``Update``).
    ///   - changeSignals: Starts a stream that signals each change (see ``ChangeSignals``); by
    ///     default the store signals the changes made through it.
    ///
    /// > Important: Without `update`, the store updates by calling `load`, the transform, then
    /// > `save` or `remove`. That is not atomic: two concurrent updates can both read the same
    /// > value, and one change is lost. Supply `update` when the backend can lock or run a
    /// > transaction (SQLite, a keychain item, a server's compare-and-swap).
    @inlinable
    public init(
        label: String = "\(Value.self) store",
        load: @escaping Load,
        loadImmediately: LoadImmediately? = nil,
        save: @escaping Save,
        remove: @escaping Remove,
        update: Update? = nil,
        changeSignals: ChangeSignals? = nil
    ) {
        self.label = label
        self.load = load
        self.loadImmediately = loadImmediately
        if let changeSignals {
            self.saveClosure = save
            self.remove = remove
            self.update = update ?? Self.loadingAndSaving(load: load, save: save, remove: remove)
            self.changeSignals = changeSignals
            return
        }
        let broadcaster = ChangeBroadcaster()
        self.saveClosure = { value, environment in
            let stored = try await save(value, environment)
            broadcaster.signal()
            return stored
        }
        self.remove = { environment in
            try await remove(environment)
            broadcaster.signal()
        }
        if let update {
            self.update = { environment, body in
                let stored = try await update(environment, body)
                broadcaster.signal()
                return stored
            }
        } else {
            self.update = Self.loadingAndSaving(load: load, save: saveClosure, remove: self.remove)
        }
        self.changeSignals = { _ in broadcaster.signals() }
    }
}

extension ValueStore where Environment == Void {
    /// Creates a store whose operations need no environment; see
    /// ``init(label:load:loadImmediately:save:remove:update:changeSignals:)``.
    ///
    /// ```swift
    /// let token = ValueStore<Void, String>(
    ///     load: { try await vault.token() },
    ///     save: { token in try await vault.setToken(token) },
    ///     remove: { try await vault.deleteToken() }
    /// )
    /// ```
    @inlinable
    public init(
        label: String = "\(Value.self) store",
        load: @escaping @Sendable () async throws -> Value,
        save: @escaping @Sendable (_ value: Value) async throws -> Value,
        remove: @escaping @Sendable () async throws -> Void,
        update: (@Sendable (_ body: (_ value: inout Value?) async throws -> Void) async throws -> Value?)? = nil
    ) {
        self.init(
            label: label,
            load: { _ in try await load() },
            save: { value, _ in try await save(value) },
            remove: { _ in try await remove() },
            update: update.map { update in { @Sendable _, body in try await update(body) } }
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
        try await load(())
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
        if let saveImmediately {
            return try saveImmediately(value, ())
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
        try await remove(())
    }
}
