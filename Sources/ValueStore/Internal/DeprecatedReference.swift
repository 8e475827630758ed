// `Reference` and `Ref` from the library this one grew from: a box whose value a store reads
// and writes. They come back as a `Sendable` box, deprecated in favour of `inMemory`.

import Synchronization

/// A box holding an optional value, with a store over it.
///
/// The value is guarded by a lock, so the box is `Sendable` and may be shared between tasks.
@available(*, deprecated, message: "use ValueStore.inMemory(_:), a store that keeps its value in memory")
public final class Reference<Value: Sendable>: Sendable {
    let box: InMemoryBox<Value>

    /// Creates a box.
    ///
    /// - Parameter value: The value held at first, or `nil` to start empty.
    public init(_ value: Value? = nil) {
        box = InMemoryBox(value)
    }

    /// The value held, or `nil`.
    public var value: Value? {
        get { box.state.withLock { $0.value } }
        set { box.store(newValue) }
    }

    /// A store over the box: `nil` is absent, and saving or removing changes ``value``.
    public var valueStore: ValueStore<Void, Value> {
        .inMemory(box, label: "reference store")
    }
}

/// The first name of ``Reference``.
@available(*, deprecated, message: "use ValueStore.inMemory(_:), a store that keeps its value in memory")
public typealias Ref<Value: Sendable> = Reference<Value>
