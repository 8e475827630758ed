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
///   listening connection per client and table receives them; it skips this process's own and
///   signals every stream of the key otherwise.
/// - When the listening connection is lost it listens again, then signals every observed key
///   once: a notification missed in between costs one reload, never a stale value.
/// - A table is listened to while at least one stream follows one of its keys.
final class PostgresChanges: Sendable {
    static let shared = PostgresChanges()

    /// One client's table: the listening connection's task and the keys it follows.
    struct Target: Hashable {
        let client: ObjectIdentifier
        let table: PostgresTableName
    }

    private final class Listener: Sendable {
        struct Observed {
            let broadcaster = ChangeBroadcaster()
            var streams = 0
        }
        let observed = Mutex<[String: Observed]>([:])
        /// Set once, right after the listener is made, under the registry's lock.
        let task = Mutex<Task<Void, Never>?>(nil)
        /// How many times it started listening, for tests.
        let listens = Atomic<Int>(0)

        func broadcaster(_ key: String) -> ChangeBroadcaster? {
            observed.withLock { $0[key]?.broadcaster }
        }

        /// Signals every observed key: after listening (again), when notifications may have been
        /// missed.
        func signalEveryKey() {
            let broadcasters = observed.withLock { $0.values.map(\.broadcaster) }
            for broadcaster in broadcasters {
                broadcaster.signalAll()
            }
        }
    }

    private let listeners = Mutex<[Target: Listener]>([:])

    /// The name this process writes under for `client`: a random number for the process and the
    /// client's identity, so two clients of one process hear each other as two machines do.
    static func writer(for client: PostgresClient) -> String {
        let identity = UInt(bitPattern: ObjectIdentifier(client).hashValue)
        return "\(String(processNonce, radix: 16))-\(String(identity, radix: 16))"
    }

    private static let processNonce = UInt64.random(in: 1...UInt64.max)

    /// A stream of signals for `key` (an identifier from ``PostgresKey``) in `table`.
    func signals(client: PostgresClient, table: PostgresTableName, key: String) -> AsyncStream<Void> {
        let target = Target(client: ObjectIdentifier(client), table: table)
        let broadcaster = listeners.withLock { listeners in
            let listener: Listener
            if let existing = listeners[target] {
                listener = existing
            } else {
                listener = Listener()
                listeners[target] = listener
                let writer = Self.writer(for: client)
                listener.task.withLock {
                    $0 = Task { await Self.listen(client: client, table: table, writer: writer, listener: listener) }
                }
            }
            return listener.observed.withLock { observed in
                observed[key, default: Listener.Observed()].streams += 1
                return observed[key]!.broadcaster
            }
        }
        return broadcaster.signals { [weak self] in
            self?.release(target, key: key)
        }
    }

    private func release(_ target: Target, key: String) {
        let stopped: Task<Void, Never>? = listeners.withLock { listeners in
            guard let listener = listeners[target] else { return nil }
            let remaining = listener.observed.withLock { observed in
                observed[key]!.streams -= 1
                if observed[key]!.streams == 0 {
                    observed[key] = nil
                }
                return observed.count
            }
            guard remaining == 0 else { return nil }
            listeners[target] = nil
            return listener.task.withLock { $0 }
        }
        stopped?.cancel()
    }

    /// This process wrote `keys` of `table` through `client`: signal their streams, except the
    /// current writer's.
    func didWrite(client: PostgresClient, table: PostgresTableName, keys: some Sequence<String>) {
        let target = Target(client: ObjectIdentifier(client), table: table)
        guard let listener = listeners.withLock({ $0[target] }) else { return }
        for key in keys {
            listener.broadcaster(key)?.signal()
        }
    }

    /// Whether a listening connection is wanted for `table`; tests use it to check release.
    func isListening(client: PostgresClient, table: PostgresTableName) -> Bool {
        listeners.withLock { $0[Target(client: ObjectIdentifier(client), table: table)] != nil }
    }

    /// How many tables of `client` this process listens to, each holding one connection.
    func listenerCount(client: PostgresClient) -> Int {
        listeners.withLock { $0.keys.count { $0.client == ObjectIdentifier(client) } }
    }

    /// How many times the listener of `table` started listening; tests wait on it.
    func listenCount(client: PostgresClient, table: PostgresTableName) -> Int {
        let listener = listeners.withLock { $0[Target(client: ObjectIdentifier(client), table: table)] }
        return listener?.listens.load(ordering: .relaxed) ?? 0
    }

    /// Holds one connection listening on the table's channel until cancelled, listening again
    /// whenever the connection is lost.
    @concurrent
    private static func listen(
        client: PostgresClient,
        table: PostgresTableName,
        writer: String,
        listener: Listener
    ) async {
        var pause = Duration.milliseconds(20)
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: table.channel) { notifications in
                        listener.listens.add(1, ordering: .relaxed)
                        // Anything written before this moment reached no listener of ours.
                        listener.signalEveryKey()
                        pause = .milliseconds(20)
                        for try await notification in notifications {
                            guard let change = PostgresChangeNotice(notification.payload), change.writer != writer
                            else { continue }
                            listener.broadcaster(change.key)?.signalAll()
                        }
                    }
                }
            } catch {
                // The connection was lost or could not be made: listen again after a pause.
            }
            guard !Task.isCancelled else { return }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(1))
        }
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
