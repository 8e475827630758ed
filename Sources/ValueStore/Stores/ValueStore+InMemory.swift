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
    /// - Parameter initial: The value stored at first, or `nil` to start empty.
    /// - Returns: A store that holds its value in memory.
    @inlinable
    public static func inMemory(_ initial: Value? = nil) -> Self {
        let box = Locked(InMemoryBox(value: initial))
        let label = "in-memory store"
        return Self(
            label: label,
            load: { _ in
                guard let value = box.withLock({ $0.value }) else {
                    throw ValueStoreError(.notFound, store: label)
                }
                return value
            },
            save: { value, _ in
                box.withLock { $0.set(value) }
                return value
            },
            remove: { _ in
                box.withLock { $0.set(nil) }
            },
            update: { _, body in
                // The body may await, so it runs outside the lock on a snapshot. The result
                // commits only if no other write got in meanwhile; otherwise the body runs again
                // on the newer value, so no write is ever lost.
                while true {
                    var (value, version) = box.withLock { ($0.value, $0.version) }
                    try await body(&value)
                    let committed = box.withLock { box in
                        guard box.version == version else { return false }
                        box.set(value)
                        return true
                    }
                    if committed {
                        return value
                    }
                }
            }
        )
    }
}

/// The value an in-memory store holds, and a count of its writes that lets an update tell whether
/// another write got in while its body ran.
@usableFromInline
struct InMemoryBox<Value> {
    @usableFromInline var value: Value?
    @usableFromInline var version: UInt64 = 0

    @inlinable
    init(value: Value?) {
        self.value = value
    }

    @inlinable
    mutating func set(_ newValue: Value?) {
        value = newValue
        version &+= 1
    }
}
