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
    /// - Parameter initial: The value stored at first, or `nil` to start empty.
    /// - Returns: A store that holds its value in memory.
    @inlinable
    public static func inMemory(_ initial: Value? = nil) -> Self {
        let box = Locked<Value?>(initial)
        let label = "in-memory store"
        // Direct calls, so that the async closures and their synchronous forms share one body
        // without calling through one another.
        @Sendable func read() throws -> Value {
            guard let value = box.withLock({ $0 }) else {
                throw ValueStoreError(.notFound, store: label)
            }
            return value
        }
        @Sendable func write(_ value: Value?) {
            box.withLock { $0 = value }
        }
        return Self(
            label: label,
            transaction: Transaction { _, body in
                try box.withLock { value in
                    try body(&value)
                    return value
                }
            },
            immediate: Immediate(
                load: { _ in try read() },
                save: { value, _ in
                    write(value)
                    return value
                },
                remove: { _ in
                    write(nil)
                    return true
                }
            ),
            returnsSavedValue: true,
            load: { _ in try read() },
            save: { value, _ in
                write(value)
                return value
            },
            remove: { _ in write(nil) }
        )
    }
}
