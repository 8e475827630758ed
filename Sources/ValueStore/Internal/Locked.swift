public import Synchronization

/// State shared between closures and guarded by a `Mutex`.
///
/// `Mutex` cannot be copied, so closures share it through this small reference; most of the
/// library's shared mutable state lives in one. A class that guards its own fields holds a
/// `Mutex` directly instead, one allocation and one indirection fewer: `InMemoryBox` (on every
/// call of an in-memory store), `ChangeBroadcaster` and `KeyVault`. Counters and flags that
/// need no lock are `Atomic`s.
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
