public import Synchronization

extension ValueStore where Value: Sendable {
    /// A store that keeps its value in memory, behind a lock: for tests, previews and state that
    /// must not outlive the process.
    ///
    /// Each call creates an independent box, so two stores made by two calls never share a value.
    /// Loads, saves and removes are thread-safe, and ``update(environment:_:)`` is atomic: 500
    /// concurrent `update { $0 += 1 }` add exactly 500. An update's body runs outside the lock
    /// and commits only if no other write came first; otherwise it runs again on the newer value.
    /// The environment is ignored.
    ///
    /// ```swift
    /// let counter = ValueStore<Void, Int>.inMemory(0)
    /// try await counter.update { $0 += 1 }
    /// try await counter.load()   // 1
    /// ```
    ///
    /// ``changes()`` reports each save, remove and update made through the store or its copies.
    ///
    /// - Parameter initial: The value stored at first, or `nil` to start empty.
    /// - Returns: A store that holds its value in memory.
    @inlinable
    public static func inMemory(_ initial: Value? = nil) -> Self {
        inMemory(InMemoryBox(initial), label: "in-memory store")
    }

    /// A store over `box`, which other code may hold too (the deprecated `Reference` does).
    @inlinable
    static func inMemory(_ box: InMemoryBox<Value>, label: String) -> Self {
        var store = Self(
            label: label,
            load: { _ in try box.load(label: label) },
            loadImmediately: { _ in try box.load(label: label) },
            save: { value, _ in
                box.store(value)
                return value
            },
            remove: { _ in
                box.store(nil)
            },
            update: { _, body in
                // The body may await, so it runs outside the lock on a snapshot. The result
                // commits only if no other write got in meanwhile; otherwise the body runs again
                // on the newer value, so no write is ever lost.
                while true {
                    var (value, version) = box.state.withLock { ($0.value, $0.version) }
                    try await body(&value)
                    if box.store(value, ifVersion: version) {
                        return value
                    }
                }
            },
            changeSignals: { _ in box.signals() }
        )
        // What `save` does, without the async frame its call costs; `save(_:)` tries it first.
        store.saveImmediately = { value, _ in
            box.store(value)
            return value
        }
        return store
    }
}

/// The box behind an ``ValueStore/inMemory(_:)`` store: its value, a count of its writes (so an
/// update can tell whether another write got in while its body ran) and how many streams follow
/// it, under one lock, so a write that nobody observes pays for no more than a comparison; and
/// the broadcaster of its changes.
@usableFromInline
final class InMemoryBox<Value: Sendable>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var value: Value?
        @usableFromInline var version: UInt64 = 0
        @usableFromInline var streams = 0

        @inlinable
        init(value: Value?) {
            self.value = value
        }
    }

    @usableFromInline let state: Mutex<State>
    @usableFromInline let changes = ChangeBroadcaster()

    @inlinable
    init(_ value: Value?) {
        state = Mutex(State(value: value))
    }

    /// The value, or ``ValueStoreError/notFound`` naming the store `label`.
    @inlinable
    func load(label: String) throws -> Value {
        guard let value = state.withLock({ $0.value }) else {
            throw ValueStoreError(.notFound, store: label)
        }
        return value
    }

    /// Stores `newValue` (`nil`: nothing) and signals the streams that follow the store.
    @inlinable
    func store(_ newValue: Value?) {
        let listened = state.withLock { state in
            state.value = newValue
            state.version &+= 1
            return state.streams > 0
        }
        if listened {
            changes.signalListeners()
        }
    }

    /// Stores `newValue` only if no write came after `version`; returns whether it did.
    @inlinable
    func store(_ newValue: Value?, ifVersion version: UInt64) -> Bool {
        let (stored, listened) = state.withLock { state in
            guard state.version == version else { return (false, false) }
            state.value = newValue
            state.version &+= 1
            return (true, state.streams > 0)
        }
        if listened {
            changes.signalListeners()
        }
        return stored
    }

    /// A stream of change signals, counted while it lives.
    @usableFromInline
    func signals() -> AsyncStream<Void> {
        state.withLock { $0.streams += 1 }
        return changes.signals(onTermination: { [self] in state.withLock { $0.streams -= 1 } })
    }
}
