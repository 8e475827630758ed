import ValueStore

/// A failure or delay to inject into a store's operations, for testing error paths.
///
/// ```swift
/// let flaky = ValueStore<Void, Int>.inMemory(1).injecting(.failingCall(2))
/// try await flaky.load()   // call 1 succeeds
/// try await flaky.load()   // call 2 throws the injected error
/// ```
///
/// Calls are numbered from 1 across `load`, `save` and `remove`, in the order they start.
public struct Fault: Sendable {
    /// Which operation a call performs.
    public enum Operation: Sendable, Hashable {
        /// A load.
        case load
        /// A save.
        case save
        /// A remove.
        case remove
    }

    enum Effect: Sendable {
        case failBefore(any Error)
        case failAfter(any Error)
        case delay(Duration)
    }

    let effect: @Sendable (_ call: Int, _ operation: Operation) -> Effect?

    /// Fails the call with the given number, before it reaches the store.
    ///
    /// ```swift
    /// let store = base.injecting(.failingCall(3))
    /// ```
    ///
    /// - Parameters:
    ///   - number: The call to fail, counting from 1.
    ///   - error: The error to throw; by default an I/O `ValueStoreError` naming the call.
    /// - Returns: A fault.
    public static func failingCall(_ number: Int, with error: (any Error)? = nil) -> Self {
        Self { call, operation in
            call == number ? .failBefore(error ?? injected(call, operation)) : nil
        }
    }

    /// Fails every save. By default the store is left untouched; with `afterWriting`, the store
    /// saves the value and the call fails anyway, like a write whose acknowledgement was lost.
    ///
    /// ```swift
    /// let full = base.injecting(.failingSaves(with: ValueStoreError(.io, reason: "disk full")))
    /// ```
    ///
    /// - Parameters:
    ///   - error: The error to throw; by default an I/O `ValueStoreError` naming the call.
    ///   - afterWriting: Whether the store saves the value before the call fails.
    /// - Returns: A fault.
    public static func failingSaves(with error: (any Error)? = nil, afterWriting: Bool = false) -> Self {
        failing(.save, with: error, afterWriting: afterWriting)
    }

    /// Fails every call of one operation.
    ///
    /// ```swift
    /// let unreadable = base.injecting(.failing(.load))
    /// ```
    ///
    /// - Parameters:
    ///   - operation: The operation to fail.
    ///   - error: The error to throw; by default an I/O `ValueStoreError` naming the call.
    ///   - afterWriting: Whether the store performs the operation before the call fails.
    /// - Returns: A fault.
    public static func failing(
        _ operation: Operation,
        with error: (any Error)? = nil,
        afterWriting: Bool = false
    ) -> Self {
        Self { call, called in
            guard called == operation else { return nil }
            let error = error ?? injected(call, called)
            return afterWriting ? .failAfter(error) : .failBefore(error)
        }
    }

    /// Delays every call before it reaches the store.
    ///
    /// ```swift
    /// let slow = base.injecting(.delaying(.milliseconds(50)))
    /// ```
    ///
    /// - Parameter duration: How long each call waits.
    /// - Returns: A fault.
    public static func delaying(_ duration: Duration) -> Self {
        Self { _, _ in .delay(duration) }
    }

    private static func injected(_ call: Int, _ operation: Operation) -> ValueStoreError {
        ValueStoreError(.io, store: "fault-injecting store", reason: "injected fault on call \(call) (\(operation))")
    }
}
