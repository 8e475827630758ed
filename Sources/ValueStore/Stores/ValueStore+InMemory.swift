extension ValueStore where Value: Sendable {
    /// A store that keeps its value in memory, behind a lock: for tests, previews and state that
    /// must not outlive the process.
    ///
    /// Each call creates an independent box, so two stores made by two calls never share a value.
    /// Loads, saves and removes are thread-safe, and ``update(environment:_:)`` is atomic: 500
    /// concurrent `update { $0 += 1 }` add exactly 500. The environment is ignored.
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
        let box = Locked<Value?>(initial)
        let label = "in-memory store"
        let changes = ChangeBroadcaster()
        return Self(
            label: label,
            load: { _ in
                guard let value = box.withLock({ $0 }) else {
                    throw ValueStoreError(.notFound, store: label)
                }
                return value
            },
            save: { value, _ in
                box.withLock { $0 = value }
                changes.signal()
                return value
            },
            remove: { _ in
                box.withLock { $0 = nil }
                changes.signal()
            },
            update: { _, body in
                let stored = try box.withLock { value in
                    try body(&value)
                    return value
                }
                changes.signal()
                return stored
            },
            changeSignals: { _ in changes.signals() }
        )
    }
}
