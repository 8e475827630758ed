import Synchronization

/// Records every operation a store performs, for tests that check how code uses a store.
///
/// Wrap a store with `recording(into:)` and read the recorder afterwards:
///
/// ```swift
/// let recorder = ValueStoreRecorder<Int>()
/// let store = ValueStore<Void, Int>.inMemory(1).recording(into: recorder)
/// try await store.update { $0 += 1 }
/// #expect(recorder.operations == [.load, .save(2)])
/// ```
public final class ValueStoreRecorder<Value: Sendable>: Sendable {
    /// An operation on a store, with the value saved.
    public enum Operation: Sendable {
        /// A load.
        case load
        /// A save of the given value.
        case save(Value)
        /// A remove.
        case remove
    }

    /// An operation and how it ended.
    public struct Record: Sendable {
        /// The operation.
        public var operation: Operation
        /// The value loaded or stored (`nil` for a remove), or the error thrown.
        public var result: Result<Value?, any Error>
    }

    // Mutex is Sendable and guards the records; the class holds nothing else.
    private let storage = Mutex<[Record]>([])

    /// Creates an empty recorder.
    public init() {}

    /// Every operation with its outcome, in the order they finished.
    public var records: [Record] {
        storage.withLock { $0 }
    }

    /// Every operation, in the order they finished.
    public var operations: [Operation] {
        records.map(\.operation)
    }

    /// The values saved, in order.
    public var savedValues: [Value] {
        operations.compactMap { operation in
            if case .save(let value) = operation { value } else { nil }
        }
    }

    /// Forgets everything recorded so far.
    public func reset() {
        storage.withLock { $0.removeAll() }
    }

    func record(_ operation: Operation, _ result: Result<Value?, any Error>) {
        storage.withLock { $0.append(Record(operation: operation, result: result)) }
    }
}

extension ValueStoreRecorder.Operation: Equatable where Value: Equatable {}
