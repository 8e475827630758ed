/// One ``AsyncLock`` per key, for as long as some task holds or waits for it.
///
/// The UserDefaults stores serialize the writers of each key with it; the file stores' writers
/// of a path, whose turn an update may hold while its body runs, take turns in ``TurnLocks``. An entry exists only while it is in use, so a
/// process that touches many keys keeps no lock for any of them once the work is done.
final class KeyedLocks<Key: Hashable & Sendable>: Sendable {
    private struct Entry {
        let lock = AsyncLock()
        var users = 0
    }

    private let entries = Locked<[Key: Entry]>([:])

    init() {}

    /// Runs `body` while holding the lock for `key`.
    nonisolated(nonsending) func withLock<Result>(
        _ key: Key,
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        let lock = entries.withLock { entries in
            entries[key, default: Entry()].users += 1
            return entries[key]!.lock
        }
        defer {
            entries.withLock { entries in
                entries[key]!.users -= 1
                if entries[key]!.users == 0 {
                    entries[key] = nil
                }
            }
        }
        return try await lock.withLock(body)
    }
}
