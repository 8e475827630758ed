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
///   see each change.
/// - Setting ``value`` shows the new value at once and saves it in the background, in order. A
///   failed save sets ``error`` and puts back what the store really holds.
/// - A load that finds nothing shows `default`. A load that fails for another reason keeps the
///   value shown and sets ``error``.
///
/// > Important: After a load failed with anything but absence (corrupt data, a locked vault, a
/// > newer format), nothing is saved over that data: setting ``value`` is refused and leaves
/// > ``error`` set, and ``set(_:)`` and ``update(_:)`` throw that failure, until a ``reload()``
/// > or a change from the store reads it again, or the app moves the file aside with
/// > ``FileQuarantine``.
///
/// For `StoredValue<Wrapped?>`, setting `nil` removes the stored value.
@MainActor
@Observable
public final class StoredValue<Value: Sendable> {
    /// The value shown: what the store holds, or `default` while it holds nothing.
    ///
    /// Observed by hand through ``valueKeyPath``: a key path into a generic class is built anew
    /// at each use, which would make every read of ``value`` cost a microsecond.
    @ObservationIgnored private var storage: Value
    @ObservationIgnored private let valueKeyPath: KeyPath<StoredValue, Value> = \.value

    /// The value shown, reported to observers as ``value``.
    private var current: Value {
        get {
            _$observationRegistrar.access(self, keyPath: valueKeyPath)
            return storage
        }
        set {
            _$observationRegistrar.withMutation(of: self, keyPath: valueKeyPath) {
                storage = newValue
            }
        }
    }

    /// The last failure to load or save, or `nil` after a success.
    ///
    /// ```swift
    /// if let error = settings.error { showBanner(error) }
    /// ```
    public private(set) var error: (any Error)?

    @ObservationIgnored private let store: ValueStore<Void, Value>
    @ObservationIgnored private let defaultValue: Value
    /// Whether the last load failed with anything but absence, so writes must not replace it.
    @ObservationIgnored private var unreadable = false
    /// Whether a load has finished, so ``unreadable`` says something.
    @ObservationIgnored private var hasLoaded = false
    /// Background saves not yet finished; changes arriving meanwhile would show older values.
    @ObservationIgnored private var pendingSaves = 0
    /// The last background save, which the next one waits for, so they land in order.
    @ObservationIgnored private var lastSave: Task<Void, Never>?
    /// The task that follows the store's changes, cancelled when this object goes away.
    @ObservationIgnored private let following = Locked<Task<Void, Never>?>(nil)

    /// Creates a value that shows `default`, loads the store, then follows its changes.
    ///
    /// ```swift
    /// @State private var settings = StoredValue(.settings, default: .standard)
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store to read and write.
    ///   - default: The value shown before the first load and while the store holds nothing.
    public init(_ store: ValueStore<Void, Value>, default: Value) {
        self.store = store
        self.defaultValue = `default`
        self.storage = `default`
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
        let stored = StoredValue(store, default: `default`, following: false)
        stored.apply(state)
        stored.follow()
        return stored
    }

    private init(_ store: ValueStore<Void, Value>, default: Value, following: Bool) {
        self.store = store
        self.defaultValue = `default`
        self.storage = `default`
    }

    deinit {
        following.withLock { $0?.cancel() }
    }

    /// The value shown; setting it shows the new value at once and saves it in the background.
    ///
    /// ```swift
    /// settings.value.fontSize += 1
    /// ```
    ///
    /// A failed save sets ``error`` and shows what the store holds again. After a failed load,
    /// setting is refused: the value shown stays and ``error`` says why. A value set before the
    /// first load finished is saved only once a load shows the store can be read.
    public var value: Value {
        get { current }
        set {
            guard !unreadable else {
                error = refusal()
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
    ///   writing, the failure of the last load when it could not read the store.
    public func set(_ newValue: Value) async throws {
        guard await isWritable() else { throw refusal() }
        current = newValue
        await lastSave?.value
        do {
            try await write(newValue)
            error = nil
        } catch {
            await restore(after: error)
            throw error
        }
    }

    /// Changes the value atomically through the store's ``ValueStore/update`` and shows the
    /// result.
    ///
    /// ```swift
    /// try await launches.update { $0 += 1 }
    /// ```
    ///
    /// - Parameter body: Changes the value; it starts from `default` when nothing is stored. For
    ///   an optional value, setting `nil` removes it.
    /// - Throws: `body`'s error, with nothing written; the store's failure; or, without
    ///   writing, the failure of the last load when it could not read the store.
    public func update(_ body: (_ value: inout Value) throws -> Void) async throws {
        guard await isWritable() else { throw refusal() }
        await lastSave?.value
        let defaultValue = defaultValue
        do {
            let stored = try await store.update(()) { stored in
                var value = stored ?? defaultValue
                try body(&value)
                stored = isNil(value) ? nil : value
            }
            current = stored ?? defaultValue
            error = nil
        } catch {
            self.error = error
            throw error
        }
    }

    /// Reads the store again: the way out after a failed load, once the data is repaired or the
    /// vault unlocked.
    ///
    /// ```swift
    /// await settings.reload()
    /// ```
    public func reload() async {
        let store = store
        apply(await StoredState { try await store.load() })
    }

    /// Shows what the store holds after a write failed, keeping the write's error.
    private func restore(after failure: any Error) async {
        await reload()
        if error == nil {
            error = failure
        }
    }

    /// Whether writing cannot replace data that could not be read: reads the store first when
    /// no load has finished yet.
    private func isWritable() async -> Bool {
        if !hasLoaded {
            await reload()
        }
        return !unreadable
    }

    /// Shows a state the store reported.
    private func apply(_ state: StoredState<Value>) {
        hasLoaded = true
        switch state {
        case .value(let value):
            current = value
            error = nil
            unreadable = false
        case .absent:
            current = defaultValue
            error = nil
            unreadable = false
        case .failed(let failure):
            error = failure
            unreadable = true
        }
    }

    private func follow() {
        let changes = store.changes()
        let task = Task { [weak self] in
            for await state in changes {
                guard let self else { return }
                // A state read while this object's own saves are in flight may be older than
                // what it shows; the last save's result is what the store will hold.
                if self.pendingSaves == 0 {
                    self.apply(state)
                }
            }
        }
        following.withLock { $0 = task }
    }

    private func saveInBackground(_ newValue: Value) {
        let previous = lastSave
        pendingSaves += 1
        lastSave = Task { [weak self] in
            await previous?.value
            guard let self else { return }
            defer { self.pendingSaves -= 1 }
            // Set before the first load finished: read the store first, and write nothing
            // over data that could not be read.
            guard await self.isWritable() else { return }
            do {
                try await self.write(newValue)
                self.error = nil
            } catch {
                await self.restore(after: error)
            }
        }
    }

    private func write(_ newValue: Value) async throws {
        if isNil(newValue) {
            try await store.remove()
        } else {
            try await store.save(newValue)
        }
    }

    /// Why a write is refused: the failure that made the stored value unreadable.
    private func refusal() -> any Error {
        error
            ?? ValueStoreError(
                .corrupted, store: store.label, reason: "the stored value could not be read, so it is not overwritten")
    }
}

/// Whether `value` is an optional holding `nil`.
private func isNil<Value>(_ value: Value) -> Bool {
    guard let optional = value as? any OptionalValue else { return false }
    return optional.isNone
}

private protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    var isNone: Bool { self == nil }
}
