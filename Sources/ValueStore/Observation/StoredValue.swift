public import Observation

/// A store's value for UI code: observable, on the main actor, following the store's changes.
///
/// ```swift
/// let settings = StoredValue(ValueStore<Void, Settings>.jsonFile(url), default: .standard)
/// settings.value.theme = .dark   // shown at once, saved in the background
/// ```
///
/// It starts with `default`, loads the store, then follows ``ValueStore/changes()`` for as long
/// as it lives, so writes by other screens, other stores over the same file and other processes
/// show up. ``loaded(_:default:)`` returns one already loaded, so a screen never shows the
/// default first.
///
/// - Reading ``value`` is a stored-property read; observers (SwiftUI, `withObservationTracking`)
///   see each change of ``value`` and ``error``.
/// - Setting ``value`` shows the new value at once and saves it in the background, in order.
///   Values set while a write is in flight share the next write (only the latest is kept);
///   ``isSaving`` says a set value is not yet durable, and ``flush()`` waits until it is. A
///   failed save sets ``error`` and puts back what the store really holds.
/// - A load that finds nothing shows `default`. A load that fails for another reason keeps the
///   value shown and sets ``error``.
/// - No state the store reports is lost. One that arrives while a write is in flight may be older
///   than that write, so the value shown waits: once the writes finish, the store is read again
///   and that read is shown. A failure to read takes effect at once, even mid-write.
///
/// > Important: After a failure to read the store, nothing is saved over its data: setting
/// > ``value`` is refused and leaves ``error`` set, and ``set(_:)`` and ``update(_:)`` throw that
/// > failure, until ``reload()`` or a change from the store reads a value or absence, or the app
/// > moves the file aside with ``FileQuarantine``. A failure to read is any failed load (the
/// > first, ``reload()``, a state from ``ValueStore/changes()``, the load after a failed write),
/// > and any write that failed because the stored data could not be read: ``ValueStoreError``
/// > `corrupted`, `decodingFailed`, `newerVersion`, `unsupportedFormat`, `wrongKey`,
/// > `authenticationFailed`, `itemMismatch` or `locked`, or a `DecodingError`. After any other
/// > failed write (`io`, which can be either side, `encodingFailed`, a store's own error), the
/// > load that follows decides. The error `update`'s body throws is only rethrown.
///
/// For `StoredValue<Wrapped?>`, setting `nil` removes the stored value.
@MainActor
public final class StoredValue<Value: Sendable>: Observable {
    /// Tells observers about ``value`` and ``error``, by hand: no reliance on `@Observable`'s names.
    @usableFromInline let registrar = ObservationRegistrar()

    /// The value shown, observed through a key path kept here: one into a generic class is built
    /// anew at each use, which would make every read of ``value`` cost a microsecond.
    @usableFromInline var storage: Value
    @usableFromInline let valueKeyPath: KeyPath<StoredValue, Value> = \.value
    private var storedError: (any Error)?
    private let errorKeyPath: KeyPath<StoredValue, (any Error)?> = \.error

    /// The value shown, reported to observers as ``value``.
    var current: Value {
        get { observed(valueKeyPath, storage) }
        set { registrar.withMutation(of: self, keyPath: valueKeyPath) { storage = newValue } }
    }

    /// `member`, after telling observers it was read through `keyPath`. Inlinable, with what it
    /// reads, so a read of ``value`` compiles into the caller, specialized for its `Value`.
    @inlinable
    func observed<Member>(_ keyPath: KeyPath<StoredValue, Member>, _ member: Member) -> Member {
        registrar.access(self, keyPath: keyPath)
        return member
    }

    /// The last failure to load or save, or `nil` after a success.
    ///
    /// ```swift
    /// if let error = settings.error { showBanner(error) }
    /// ```
    public internal(set) var error: (any Error)? {
        get { observed(errorKeyPath, storedError) }
        set { registrar.withMutation(of: self, keyPath: errorKeyPath) { storedError = newValue } }
    }

    /// Whether a value set through ``value`` is not yet durable: `true` from the set until the
    /// write that holds it, or a later value, returns; `false` once ``flush()`` has returned,
    /// unless a value was set since.
    ///
    /// ```swift
    /// ProgressView().opacity(settings.isSaving ? 1 : 0)
    /// ```
    public internal(set) var isSaving: Bool {
        get { observed(isSavingKeyPath, storedIsSaving) }
        set {
            guard newValue != storedIsSaving else { return }
            registrar.withMutation(of: self, keyPath: isSavingKeyPath) { storedIsSaving = newValue }
        }
    }

    let store: ValueStore<Void, Value>
    let defaultValue: Value
    /// What the store last held, as read or written: shown when a write fails to read or is refused.
    var lastKnown: Value
    /// Whether the last read of the store failed, so writes must not replace what it holds.
    var unreadable = false
    /// Whether a read has finished, so ``unreadable`` says something.
    var hasLoaded = false
    /// How many failures to read have been shown: a read that started before one is older than
    /// it, so it never clears it.
    private var failuresShown = 0
    /// Writes not finished (background saves from when they are queued, ``set(_:)``,
    /// ``update(_:)``): a state arriving meanwhile may be older than what they write.
    var writesInFlight = 0
    /// Whether a state arrived while writes were in flight, so the store is read again after.
    var missedState = false
    /// The last set not yet handed to the writing task, with its number: setting again replaces
    /// it, so a burst of sets keeps one value. A set refused over unreadable data waits here too
    /// while a write is in flight, so that it settles after that write, in order.
    var pendingSave: (set: PendingSet, number: Int)?
    /// How many times ``value`` has been set.
    var setsMade = 0
    /// The task that writes set values while any wait, the latest each time; `nil` when none
    /// do. The next ``set(_:)`` or ``update(_:)`` waits for it, so writes land in order.
    var saving: Task<Void, Never>?
    /// The last set whose outcome is known: its number, and the failure of the write that held
    /// it or its refusal. It only moves forward.
    var settled: (set: Int, failure: (any Error)?) = (0, nil)
    /// Callers of ``flush()`` waiting for the write that holds a set's value, by that set's number.
    var flushes: [(set: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var storedIsSaving = false
    private let isSavingKeyPath: KeyPath<StoredValue, Bool> = \.isSaving
    /// The task that follows the store's changes, cancelled when this object goes away.
    private let following = Locked<Task<Void, Never>?>(nil)

    /// Creates a value that shows `default`, loads the store, then follows its changes.
    ///
    /// ```swift
    /// @State private var settings = StoredValue(.settings, default: .standard)
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store to read and write.
    ///   - default: The value shown before the first load and while the store holds nothing.
    public convenience init(_ store: ValueStore<Void, Value>, default: Value) {
        self.init(store: store, default: `default`)
        follow()
    }

    /// Creates a value that has already read the store, then follows its changes.
    ///
    /// ```swift
    /// let settings = await StoredValue.loaded(.jsonFile(url), default: Settings.standard)
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store to read and write.
    ///   - default: The value shown while the store holds nothing.
    /// - Returns: A value showing what the store holds, or `default`; ``error`` says why a load
    ///   failed.
    public static func loaded(_ store: ValueStore<Void, Value>, default: Value) async -> StoredValue {
        let state = await StoredState { try await store.load() }
        let stored = StoredValue(store: store, default: `default`)
        stored.apply(state)
        stored.follow()
        return stored
    }

    private init(store: ValueStore<Void, Value>, default: Value) {
        self.store = store
        self.defaultValue = `default`
        self.storage = `default`
        self.lastKnown = `default`
    }

    deinit {
        // Cancelled outside the lock: cancelling runs the stream terminations of the follow.
        following.withLock { $0 }?.cancel()
    }

    /// The value shown; setting it shows the new value at once and saves it in the background.
    ///
    /// ```swift
    /// settings.value.fontSize += 1
    /// ```
    ///
    /// A failed save sets ``error`` and shows what the store holds again. After a failure to read
    /// the store, setting is refused: the value shown stays and ``error`` says why. A value set
    /// before the first load finished is saved only once a load shows the store can be read;
    /// otherwise the value the store was last known to hold is shown again.
    public var value: Value {
        @inlinable get { observed(valueKeyPath, storage) }
        set {
            guard !unreadable else {
                error = refusal()
                refuseInTurn()
                return
            }
            current = newValue
            saveInBackground(newValue)
        }
    }

    /// Saves `newValue` and returns once it is stored.
    ///
    /// ```swift
    /// try await settings.set(.standard)
    /// ```
    ///
    /// - Parameter newValue: The value to store; for an optional value, `nil` removes it.
    /// - Throws: The store's failure, after showing what the store holds again; or, without
    ///   writing, the failure to read the store that makes it unwritable (see ``StoredValue``).
    public func set(_ newValue: Value) async throws {
        guard await isWritable() else { throw refusal() }
        try await writing {
            current = newValue
            try await writeInTurn(newValue)
        }
    }

    /// Changes the value atomically through the store's ``ValueStore/update`` and shows the
    /// result.
    ///
    /// ```swift
    /// try await launches.update { $0 += 1 }
    /// ```
    ///
    /// A failure to read the stored value makes this object unwritable (see ``StoredValue``);
    /// another failure is followed by a load that shows what the store holds.
    ///
    /// - Parameter body: Changes the value; it starts from `default` when nothing is stored. For
    ///   an optional value, setting `nil` removes it.
    /// - Throws: `body`'s error, with nothing written and ``error`` untouched; the store's
    ///   failure; or, without writing, the failure to read the store that makes it unwritable.
    public func update(_ body: (_ value: inout Value) throws -> Void) async throws {
        guard await isWritable() else { throw refusal() }
        try await writing { try await updateInTurn(body) }
    }

    /// Reads the store again: the way out after a failure to read, once the data is repaired or
    /// the vault unlocked. While a write is in flight, what it reads is shown as a state that
    /// arrives then.
    ///
    /// ```swift
    /// await settings.reload()
    /// ```
    ///
    /// A read that started before a failure to read was shown (a damaged file reported by
    /// ``ValueStore/changes()`` while the read ran) is older than that failure: it is dropped, and
    /// the failure stays.
    public func reload() async {
        guard let state = await readUnlessOutdated() else { return }
        receive(state)
    }

    /// Reads the store's state.
    private func read() async -> StoredState<Value> {
        await StoredState { [store] in try await store.load() }
    }

    /// Reads the store's state, or returns `nil` when a failure to read was shown while the read
    /// ran: the value or absence it found is older than that failure and must not clear it.
    func readUnlessOutdated() async -> StoredState<Value>? {
        let failures = failuresShown
        let state = await read()
        guard failuresShown == failures || state.error != nil else { return nil }
        return state
    }

    /// Makes the object unwritable and shows `failure`.
    func showUnreadable(_ failure: any Error) {
        error = failure
        unreadable = true
        failuresShown += 1
    }

    /// Whether writing cannot replace data that could not be read: reads the store first when
    /// no read has finished yet.
    func isWritable() async -> Bool {
        if !hasLoaded {
            await reload()
        }
        return !unreadable
    }

    /// Takes a state the store reported: shows it, unless writes are in flight. Then a failure
    /// still makes the object unwritable at once, and a value or absence writable again; the
    /// value shown waits for the load after the writes.
    func receive(_ state: StoredState<Value>) {
        guard writesInFlight > 0 else { return apply(state) }
        hasLoaded = true
        missedState = true
        if case .failed(let failure) = state {
            showUnreadable(failure)
        } else if unreadable {
            unreadable = false
            error = nil
        }
    }

    /// Shows a state the store reported.
    func apply(_ state: StoredState<Value>) {
        hasLoaded = true
        if case .failed(let failure) = state {
            showUnreadable(failure)
            return
        }
        current = state.value ?? defaultValue
        lastKnown = current
        error = nil
        unreadable = false
    }

    private func follow() {
        let changes = store.changes()
        let task = Task { [weak self] in
            for await state in changes {
                guard let self else { return }
                self.receive(state)
            }
        }
        following.withLock { $0 = task }
    }

    /// Why a write is refused: the failure that made the stored value unreadable.
    func refusal() -> any Error {
        error
            ?? ValueStoreError(
                .corrupted, store: store.label, reason: "the stored value could not be read, so it is not overwritten")
    }
}
