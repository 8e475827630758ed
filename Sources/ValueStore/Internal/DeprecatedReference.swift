// `Reference` and `Ref` from the library this one grew from: a box whose value a store reads
// and writes. They come back as a `Sendable` box, deprecated in favour of `inMemory`.

/// A box holding an optional value, with a store over it.
///
/// The value is guarded by a lock, so the box is `Sendable` and may be shared between tasks.
@available(*, deprecated, message: "use ValueStore.inMemory(_:), a store that keeps its value in memory")
public final class Reference<Value: Sendable>: Sendable {
    let box: Locked<InMemoryBox<Value>>

    /// Creates a box.
    ///
    /// - Parameter value: The value held at first, or `nil` to start empty.
    public init(_ value: Value? = nil) {
        box = Locked(InMemoryBox(value: value))
    }

    /// The value held, or `nil`.
    public var value: Value? {
        get { box.withLock { $0.value } }
        set { box.withLock { $0.set(newValue) } }
    }

    /// A store over the box: `nil` is absent, and saving or removing changes ``value``.
    public var valueStore: ValueStore<Void, Value> {
        let box = box
        let label = "reference store"
        return ValueStore(
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
                // As in `inMemory`: the body runs on a snapshot and commits only if no write
                // got in meanwhile.
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

/// The first name of ``Reference``.
@available(*, deprecated, message: "use ValueStore.inMemory(_:), a store that keeps its value in memory")
public typealias Ref<Value: Sendable> = Reference<Value>
