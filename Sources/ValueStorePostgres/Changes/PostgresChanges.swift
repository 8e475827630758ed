#if PostgreSQL
import PostgresNIO
import Synchronization
import ValueStore

/// The change signals of every PostgreSQL value table in this process, fed into the same
/// ``ChangeBroadcaster`` engine the file watcher uses.
///
/// - A write through a store of this process signals the key's streams at once, except the
///   writer's own (a cache watching its base store), as a file write does.
/// - Each write also sends a notification in its own statement, delivered at commit. One
///   ``PostgresListener`` per client and table receives them; it skips this process's own and
///   signals every stream of the key otherwise.
/// - A table is listened to while at least one stream follows one of its keys.
/// - Listening connections never take a client's last connection: with `maximumConnections`
///   `n`, at most `n - 1` tables of it are listened to at once; the others report why.
final class PostgresChanges: Sendable {
    static let shared = PostgresChanges()

    /// One client's table.
    struct Target: Hashable {
        let client: ObjectIdentifier
        let table: PostgresTableName
    }

    private struct State {
        var listeners: [Target: PostgresListener] = [:]
        /// How many connections each client's listeners hold or are waiting for, by table: a
        /// listener replacing one that is still winding down does not count it.
        var holding: [ObjectIdentifier: [Target: Int]] = [:]
    }

    private let state = Mutex(State())

    /// The name this process writes under through the used client: a random number for the
    /// process and the client's identity (its use's ``PostgresClientUse/id``, never its address,
    /// which a later client may get), so two clients of one process hear each other as two
    /// machines do, and a client never skips the notifications of a dropped one as its own.
    static func writer(for client: PostgresClientUse) -> String {
        "\(String(processNonce, radix: 16))-\(String(client.id, radix: 16))"
    }

    private static let processNonce = UInt64.random(in: 1...UInt64.max)

    /// A stream of signals for `key` (an identifier from ``PostgresKey``) in `table`; records
    /// the listener's feed with the subscriber (see ``/ValueStore/ChangeFeed``).
    func signals(
        client: PostgresClient,
        table: PostgresTableName,
        key: String,
        label: String,
        heartbeat: Duration
    ) -> AsyncStream<Void> {
        subscribe(client: client, table: table, key: key, label: label, heartbeat: heartbeat).signals
    }

    /// A stream of signals for `key`, as ``signals(client:table:key:label:heartbeat:)``, and the
    /// number of the last notification of its ``PostgresNoticeLog`` when it subscribed: read
    /// what came after it with ``notices(client:table:key:after:)`` on each signal. A `polled`
    /// stream is also signalled every `heartbeat` while the listener does not follow, each time
    /// with a mark that reads "missed".
    func subscribe(
        client: PostgresClient,
        table: PostgresTableName,
        key: String,
        label: String,
        heartbeat: Duration,
        polled: Bool = false
    ) -> (signals: AsyncStream<Void>, read: UInt64) {
        let target = Target(client: ObjectIdentifier(client), table: table)
        let (listener, broadcaster, read) = state.withLock { state in
            let listener: PostgresListener
            if let existing = state.listeners[target] {
                listener = existing
            } else {
                listener = PostgresListener(client: client, table: table, label: label, heartbeat: heartbeat)
                state.listeners[target] = listener
                listener.task.withLock {
                    $0 = Task { await listener.run() }
                }
            }
            let (broadcaster, read) = listener.observed.withLock { observed in
                observed[key, default: PostgresListener.Observed()].streams += 1
                if polled {
                    listener.addPolled(key, in: &observed)
                }
                return (observed[key]!.broadcaster, observed[key]!.notices.last)
            }
            return (listener, broadcaster, read)
        }
        listener.feed.record()
        let signals = broadcaster.signals { [weak self] in
            self?.release(target, key: key, of: listener, polled: polled)
        }
        return (signals, read)
    }

    /// The notifications of `key` the listener of `table` kept after number `read`, whether any
    /// may have been missed, and the number to read after next time; `nil` when no listener
    /// follows the key.
    func notices(
        client: PostgresClient,
        table: PostgresTableName,
        key: String,
        after read: UInt64
    ) -> (notices: [PostgresChangeNotice], missed: Bool, last: UInt64)? {
        let listener = state.withLock { $0.listeners[Target(client: ObjectIdentifier(client), table: table)] }
        return listener?.observed.withLock { observed in
            observed[key].map { kept in
                let (notices, missed) = kept.notices.notices(after: read)
                return (notices, missed, kept.notices.last)
            }
        }
    }

    private func release(_ target: Target, key: String, of listener: PostgresListener, polled: Bool) {
        let remaining = listener.observed.withLock { observed in
            observed[key]!.streams -= 1
            if polled {
                observed[key]!.polled -= 1
            }
            if observed[key]!.streams == 0 {
                observed[key] = nil
            }
            return observed.count
        }
        guard remaining == 0 else { return }
        let stopped: Task<Void, Never>? = state.withLock { state in
            // A listener that ended (its client stopped) may have been replaced already.
            guard state.listeners[target] === listener, listener.observed.withLock({ $0.isEmpty }) else { return nil }
            state.listeners[target] = nil
            return listener.task.withLock { $0 }
        }
        stopped?.cancel()
        if stopped != nil {
            listener.polling.withLock { $0 }?.cancel()
        }
    }

    /// Reserves a connection for `listener` to listen with, unless that would take its client's
    /// last connection; returns why not, or `nil` once reserved.
    func reserveConnection(for listener: PostgresListener) -> String? {
        let maximum = PostgresPool.maximumConnections(of: listener.client)
        let client = ObjectIdentifier(listener.client)
        let target = Target(client: client, table: listener.table)
        return state.withLock { state in
            let others = state.holding[client, default: [:]].filter { $0.key != target }.values.reduce(0, +)
            if let maximum, others + 1 >= maximum {
                return
                    "the PostgresClient's pool has maximumConnections \(maximum), and listening never takes its last "
                    + "connection (\(others) held by listeners of other tables): raise maximumConnections or "
                    + "observe fewer tables"
            }
            state.holding[client, default: [:]][target, default: 0] += 1
            return nil
        }
    }

    /// Gives back the connection ``reserveConnection(for:)`` reserved.
    func releaseConnection(of listener: PostgresListener) {
        let client = ObjectIdentifier(listener.client)
        let target = Target(client: client, table: listener.table)
        state.withLock { state in
            let holding = state.holding[client, default: [:]][target, default: 1] - 1
            state.holding[client, default: [:]][target] = holding == 0 ? nil : holding
            if state.holding[client]?.isEmpty == true {
                state.holding[client] = nil
            }
        }
    }

    /// `listener`'s client stopped: the listener is forgotten, and its streams end once they
    /// have seen the failure (the listener signalled them first).
    func clientStopped(_ listener: PostgresListener) {
        state.withLock { state in
            let target = Target(client: ObjectIdentifier(listener.client), table: listener.table)
            if state.listeners[target] === listener {
                state.listeners[target] = nil
            }
        }
        let broadcasters = listener.observed.withLock { $0.values.map(\.broadcaster) }
        for broadcaster in broadcasters {
            broadcaster.finishAll()
        }
    }

    /// This process wrote `keys` of `table` through `client`: signal their streams, except the
    /// current writer's.
    func didWrite(client: PostgresClient, table: PostgresTableName, keys: some Sequence<String>) {
        let target = Target(client: ObjectIdentifier(client), table: table)
        guard let listener = state.withLock({ $0.listeners[target] }) else { return }
        for key in keys {
            listener.broadcaster(key)?.signal()
        }
    }

    /// Whether a listening connection is wanted for `table`; tests use it to check release.
    func isListening(client: PostgresClient, table: PostgresTableName) -> Bool {
        state.withLock { $0.listeners[Target(client: ObjectIdentifier(client), table: table)] != nil }
    }

    /// How many connections `client`'s listeners hold or wait for, each one table's.
    func listenerCount(client: PostgresClient) -> Int {
        state.withLock { $0.holding[ObjectIdentifier(client)]?.values.reduce(0, +) ?? 0 }
    }

    /// Whether the listener of `table` listens now, its heartbeat unanswered by nothing; tests
    /// wait on it.
    func isFollowing(client: PostgresClient, table: PostgresTableName) -> Bool {
        let listener = state.withLock { $0.listeners[Target(client: ObjectIdentifier(client), table: table)] }
        guard case .following = listener?.feed.health else { return false }
        return true
    }

    /// The health of the listener of `table`, while one is wanted.
    func feed(client: PostgresClient, table: PostgresTableName) -> ChangeFeed? {
        state.withLock { $0.listeners[Target(client: ObjectIdentifier(client), table: table)]?.feed }
    }

    /// How many times the listener of `table` started listening; tests wait on it.
    func listenCount(client: PostgresClient, table: PostgresTableName) -> Int {
        let listener = state.withLock { $0.listeners[Target(client: ObjectIdentifier(client), table: table)] }
        return listener?.listens.load(ordering: .relaxed) ?? 0
    }
}

/// A change notification's payload: `VERSION WRITER KEY`, where KEY is a ``PostgresKey``
/// identifier and may contain spaces.
struct PostgresChangeNotice: Equatable {
    var version: Int64
    var writer: String
    var key: String

    init(version: Int64, writer: String, key: String) {
        self.version = version
        self.writer = writer
        self.key = key
    }

    init?(_ payload: String) {
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let version = Int64(parts[0]) else { return nil }
        self.init(version: version, writer: String(parts[1]), key: String(parts[2]))
    }
}
#endif
