public import Synchronization

/// State shared between closures and guarded by a `Mutex`.
///
/// `Mutex` cannot be copied, so closures share it through this small reference. It is the one
/// place the library keeps shared mutable state.
@usableFromInline
final class Locked<State>: Sendable {
    @usableFromInline let mutex: Mutex<State>

    @inlinable
    init(_ state: sending State) {
        mutex = Mutex(state)
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try mutex.withLock(body)
    }
}
