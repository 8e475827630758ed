#if PostgreSQL
import PostgresNIO
import Synchronization

/// A table's or a listener's use of a client, which names the client by an identity no later
/// client shares: what ``PostgresReachability``, ``PostgresProbe`` and ``PostgresLeases`` learn
/// about a client is kept under ``id``, and forgotten when the client's last use ends; the
/// client's writer name (``PostgresChanges/writer(for:)``) is made of it.
///
/// The client's address (`ObjectIdentifier`) is no such name: once a client is dropped, the
/// allocator may place a new one at its address, which would inherit what was learned of the
/// old (a new client of a server that refuses would wait the whole `connectTimeout`, as if its
/// pool were busy). A use holds its client, so while any use of a client lives, its address
/// names it alone: every use begun then shares the first one's ``id``. When the last ends, the
/// entry and everything learned under its id go, and a client at the same address later begins
/// with a new id.
final class PostgresClientUse: Sendable {
    /// The client's identity while it is used: unique in the process, never given again.
    let id: UInt64
    /// The client used.
    let client: PostgresClient
    private let key: ObjectIdentifier
    private let registry: Registry

    /// Begins a use of `client`, under the key `key` (its address; tests give two clients one
    /// key, as the allocator may) in `registry`.
    init(_ client: PostgresClient, key: ObjectIdentifier? = nil, registry: Registry = .shared) {
        self.client = client
        self.key = key ?? ObjectIdentifier(client)
        self.registry = registry
        id = registry.begin(self.key)
    }

    deinit {
        registry.end(key)
    }

    /// The clients in use, by address: each one's identity and how many uses it has.
    final class Registry: Sendable {
        static let shared = Registry()

        private struct Entry {
            let id: UInt64
            var uses: Int
        }

        private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
        /// The last identity given, in any registry.
        private static let lastID = Atomic<UInt64>(0)

        /// How many clients are in use.
        var count: Int { entries.withLock { $0.count } }

        /// Whether a client is in use under `id`.
        func contains(_ id: UInt64) -> Bool {
            entries.withLock { $0.values.contains { $0.id == id } }
        }

        fileprivate func begin(_ key: ObjectIdentifier) -> UInt64 {
            entries.withLock { entries in
                if let entry = entries[key] {
                    entries[key]?.uses += 1
                    return entry.id
                }
                let id = Self.lastID.wrappingAdd(1, ordering: .relaxed).newValue
                entries[key] = Entry(id: id, uses: 1)
                return id
            }
        }

        fileprivate func end(_ key: ObjectIdentifier) {
            let ended = entries.withLock { entries -> UInt64? in
                guard let entry = entries[key] else { return nil }
                guard entry.uses == 1 else {
                    entries[key]?.uses -= 1
                    return nil
                }
                entries[key] = nil
                return entry.id
            }
            // Outside the registry's lock: what was learned under the id goes with it.
            if let ended {
                PostgresReachability.shared.forget(ended)
                PostgresProbe.shared.forget(ended)
                PostgresLeases.shared.forget(ended)
            }
        }
    }
}
#endif
