/// The state behind ``ValueStore/cached(by:)``: a lock that orders writes to the base and the
/// cache store, and whether the cache store can be trusted.
///
/// The cache store becomes untrusted when a write to it fails, since it may then hold an old
/// value; loads skip it until a later write to it succeeds.
final class CacheGuard: Sendable {
    let lock = AsyncLock()
    private let trusted = Locked(true)

    var isTrusted: Bool {
        trusted.withLock { $0 }
    }

    /// Makes loads skip the cache store until a write to it succeeds: the base store changed.
    func distrust() {
        trusted.withLock { $0 = false }
    }

    /// Writes to the cache store, recording whether it can be trusted afterwards.
    ///
    /// A failing cache never fails the operation: the base store already holds the truth.
    nonisolated(nonsending) func write(
        _ operation: nonisolated(nonsending) () async throws -> Void,
        orRemove remove: nonisolated(nonsending) () async throws -> Void
    ) async {
        do {
            try await operation()
            trusted.withLock { $0 = true }
        } catch {
            trusted.withLock { $0 = false }
            // Best effort: an empty cache is safe even while untrusted.
            do {
                try await remove()
            } catch {
                // Still untrusted; loads read the base store.
            }
        }
    }
}
