#if PostgreSQL
import PostgresNIO
import Synchronization
import ValueStore

/// One client's listening on one table: a connection that `LISTEN`s on the table's channel,
/// proves now and then that it still hears, and signals the keys its streams follow.
///
/// - **Signals**: a notification from another writer signals every stream of its key. After it
///   starts listening (again), it signals every key once: what was written meanwhile reached no
///   listener of ours.
/// - **Heartbeat**: when it has heard nothing for ``heartbeat``, it sends a query through the
///   listening connection and a notification from another of the client's connections, and
///   waits ``heartbeat`` for both. A query that does not return means a dead connection (a
///   crashed host, a partition, a moved virtual IP), whatever TCP keepalives a proxy answers: the
///   connection is closed and listening starts again. A notification sent that never arrives
///   means notifications are lost on the way (a transaction-mode pooler).
/// - **Health**: its ``feed`` says whether its signals can be trusted: caches answer from memory
///   only while it follows, and streams report a failure it cannot get past (a standby, no
///   connection to spare, a client that stopped) as their state.
final class PostgresListener: Sendable {
    struct Observed {
        let broadcaster = ChangeBroadcaster()
        var streams = 0
        /// How many of its streams are polled: signalled every ``heartbeat`` while the listener
        /// does not follow (a sync table's pokes, so a replica pulls on).
        var polled = 0
        /// The sync tables' notifications of the key, for their pokes' authors.
        var notices = PostgresNoticeLog()
    }

    /// The client the listening connection is leased from.
    let client: PostgresClient
    /// The listener's use of ``client``, so what it learns of reaching the server lasts while it
    /// runs.
    let use: PostgresClientUse
    /// The table whose channel it listens on.
    let table: PostgresTableName
    /// What errors call the table: `PostgreSQL table 'app_values'`.
    let label: String
    /// This process's writer name for the client: its own notifications are skipped.
    let writer: String
    /// How long it hears nothing before it checks its connection, and how often polled keys
    /// are signalled while it does not follow.
    let heartbeat: Duration
    /// Whether it follows the table's changes, for the caches and streams of its keys.
    let feed = ChangeFeed()
    /// The keys it is asked about, each with its broadcaster, how many streams follow it (and
    /// how many of them are polled), and its log of notifications.
    let observed = Mutex<[String: Observed]>([:])
    /// Set once, right after the listener is made, under the registry's lock.
    let task = Mutex<Task<Void, Never>?>(nil)
    /// The task that signals the polled keys while the listener does not follow, while any is.
    let polling = Mutex<Task<Void, Never>?>(nil)
    /// How many times it started listening, for tests.
    let listens = Atomic<Int>(0)

    init(client: PostgresClient, table: PostgresTableName, label: String, heartbeat: Duration) {
        let use = PostgresClientUse(client)
        self.client = client
        self.use = use
        self.table = table
        self.label = label
        self.writer = PostgresChanges.writer(for: use)
        self.heartbeat = heartbeat
    }

    func broadcaster(_ key: String) -> ChangeBroadcaster? {
        observed.withLock { $0[key]?.broadcaster }
    }

    /// Signals every observed key: after listening (again), when notifications may have been
    /// missed, and when the feed's health changed.
    func signalEveryKey() {
        let broadcasters = observed.withLock { observed in
            // Marked in every key's log: what follows the notifications reads "missed".
            for key in observed.keys {
                observed[key]!.notices.append(nil)
            }
            return observed.values.map(\.broadcaster)
        }
        for broadcaster in broadcasters {
            broadcaster.signalAll()
        }
    }

    /// Takes in a notification of another writer: kept in its key's log if a sync table's,
    /// then every stream of the key is signalled.
    func heard(_ change: PostgresChangeNotice) {
        let broadcaster = observed.withLock { observed -> ChangeBroadcaster? in
            if change.writer.hasPrefix(PostgresChangeNotice.syncWriter) {
                observed[change.key]?.notices.append(change)
            }
            return observed[change.key]?.broadcaster
        }
        broadcaster?.signalAll()
    }

    /// Listens until cancelled, listening again whenever the connection is lost or proved dead;
    /// ends when the client stops.
    @concurrent
    func run() async {
        var pause = Duration.milliseconds(20)
        while !Task.isCancelled {
            let ending: Ending
            if let refusal = PostgresChanges.shared.reserveConnection(for: self) {
                ending = .cannotListen(refusal)
            } else {
                ending = await listenOnce()
                PostgresChanges.shared.releaseConnection(of: self)
            }
            guard !Task.isCancelled else { return }
            switch ending {
            case .listened, .provedDead:
                if case .provedDead = ending {
                    // It died without a word, and the pool's idle connections most likely died
                    // with it: a reload on one would wait for the whole operationTimeout. They
                    // are closed before the streams hear, so the reloads get new ones.
                    await PostgresLeases.shared.closeIdle(of: use)
                }
                // Its connection died: so may the pool's others. Marked before the streams hear,
                // so their reloads wait briefly for a connection.
                pause = .milliseconds(20)
                PostgresReachability.shared.lost(use)
                report(.doubtful)
            case .lost:
                PostgresReachability.shared.lost(use)
                report(.doubtful)
            case .cannotListen(let reason):
                report(.failed(ValueStoreError(.unavailable, store: label, reason: "cannot follow changes: \(reason)")))
            case .clientStopped:
                report(
                    .failed(
                        ValueStoreError(
                            .unavailable, store: label,
                            reason: "cannot follow changes: the PostgresClient is not running (its run() returned)")))
                PostgresChanges.shared.clientStopped(self)
                return
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
    }

    /// How one try to listen ended.
    enum Ending {
        /// It listened, then the connection was lost.
        case listened
        /// Its connection went silent: it was closed, unanswered, after a heartbeat or while it
        /// started to listen.
        case provedDead
        /// No connection came, or it broke before listening.
        case lost
        /// The server or the pool does not let it listen, for this reason.
        case cannotListen(String)
        /// The client's `run()` returned: nothing will ever be listened to.
        case clientStopped
    }

    private func listenOnce() async -> Ending {
        let listened = Flag()
        // Set when the connection was closed for its silence: it died without a word.
        let silent = Flag()
        do {
            try await PostgresLeases.shared.withConnection(of: use) { connection in
                PostgresReachability.shared.reached(use)
                // A pooled connection may be dead already: LISTEN on it would wait forever.
                let watchdog = close(connection, unless: listened, within: heartbeat * 2, closing: silent)
                defer { watchdog.cancel() }
                try await connection.listen(on: table.channel) { notifications in
                    listened.set()
                    try await follow(notifications, on: connection)
                }
            }
            return .listened
        } catch let error as HeartbeatFailure {
            switch error {
            case .silent: return .provedDead
            case .closed: return .listened
            case .notificationLost:
                return .cannotListen(
                    "a notification the listening connection sent itself did not come back within \(heartbeat): "
                        + "a transaction-mode pooler (PgBouncer) between the client and PostgreSQL loses them; "
                        + "connect to PostgreSQL directly or through a session-mode pool")
            }
        } catch let error as PSQLError where error.code == .poolClosed {
            return .clientStopped
        } catch let error as PSQLError where error.serverInfo?[.sqlState] != nil {
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            if state == "25006" {
                return .cannotListen(
                    "the server is a standby, which refuses LISTEN (\(message)); point the client at the primary")
            }
            if state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" {
                return listened.isSet ? .listened : .lost
            }
            return .cannotListen("the server refused LISTEN: \(message) (SQLSTATE \(state))")
        } catch {
            if silent.isSet { return .provedDead }
            return listened.isSet ? .listened : .lost
        }
    }

    /// Closes `connection` unless `done` is set within `bound` (it listens, its statement
    /// ended): a connection that went silent would keep its caller waiting until TCP gives up.
    /// Sets `closing`, if given, before it closes.
    private func close(
        _ connection: PostgresConnection,
        unless done: Flag,
        within bound: Duration,
        closing: Flag? = nil
    ) -> Task<Void, Never> {
        Task {
            guard (try? await Task.sleep(for: bound)) != nil, !done.isSet else { return }
            closing?.set()
            try? await connection.close()
        }
    }

    /// Follows the notifications of a connection that listens, and proves it alive, until
    /// either fails.
    private func follow(_ notifications: PostgresNotificationSequence, on connection: PostgresConnection) async throws {
        listens.add(1, ordering: .relaxed)
        let heard = HeardNotifications()
        do {
            try await followAndProve(notifications, on: connection, heard: heard)
        } catch let failure as HeartbeatFailure {
            // Closed after the failure is known, so the notifications' end cannot be taken for
            // its cause; listening starts again on another connection.
            try? await connection.close()
            throw failure
        }
    }

    private func followAndProve(
        _ notifications: PostgresNotificationSequence,
        on connection: PostgresConnection,
        heard: HeardNotifications
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let heartbeat = "heartbeat \(self.writer) "
                for try await notification in notifications {
                    if notification.payload.hasPrefix(heartbeat) {
                        heard.heard(beat: UInt64(notification.payload.dropFirst(heartbeat.count)))
                        continue
                    }
                    heard.heard(beat: nil)
                    guard let change = PostgresChangeNotice(notification.payload), change.writer != self.writer
                    else { continue }
                    self.heard(change)
                }
                throw HeartbeatFailure.closed
            }
            group.addTask {
                try await self.proveAlive(connection, heard: heard)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Proves the listening connection once before it vouches for anything (a transaction-mode
    /// pooler accepts `LISTEN`, then loses the notifications), then again each time nothing was
    /// heard for ``heartbeat``: silence is measured from the last thing heard (a notification,
    /// or the answer to a heartbeat's query), so a connection that dies just after a
    /// notification is proved dead within twice ``heartbeat`` of it.
    private func proveAlive(_ connection: PostgresConnection, heard: HeardNotifications) async throws {
        var beat: UInt64 = 1
        try await prove(connection, heard: heard, beat: beat)
        report(.following)
        while true {
            let due = heard.last + self.heartbeat
            if ContinuousClock.now < due {
                try await Task.sleep(until: due)
                continue
            }
            beat += 1
            try await prove(connection, heard: heard, beat: beat)
        }
    }

    /// One heartbeat: a query through the listening connection must come back within
    /// ``heartbeat`` (else it is dead), and a notification sent from another of the client's
    /// connections must arrive on it within ``heartbeat`` of being sent (else notifications are
    /// lost on the way, as a transaction-mode pooler loses them). A notification the listening
    /// session sent itself would not do: a pooler that runs it on the same server session
    /// delivers it, and loses the others'.
    private func prove(_ connection: PostgresConnection, heard: HeardNotifications, beat: UInt64) async throws {
        let answered = Flag()
        let asking = Task {
            // Named, so an operator (and a test) sees the listening connection in pg_stat_activity.
            let roundTrip = PostgresQuery(unsafeSQL: "SELECT 1 /* valuestore listening on \(table.channel) */")
            for try await _ in try await connection.query(roundTrip, logger: PostgresValueTable.logger) {}
            answered.set()
            heard.answered()
        }
        let sending = send(beat: beat)
        let cameBack = await heard.wait(forBeat: beat, within: self.heartbeat)
        guard !Task.isCancelled else {
            asking.cancel()
            sending.cancel()
            throw CancellationError()
        }
        if cameBack { return }
        guard answered.isSet else { throw HeartbeatFailure.silent }
        // The connection answers; did the notification leave in time to be heard? The send
        // ends within ``heartbeat`` of its lease (its connection is closed if it goes silent),
        // and a send still waiting for a lease after ``heartbeat`` is cancelled.
        let timer = Task {
            guard (try? await Task.sleep(for: self.heartbeat)) != nil else { return }
            sending.cancel()
        }
        let sentAt = await sending.value
        timer.cancel()
        guard let sentAt else { return }  // no connection to send from: nothing learned
        let left = sentAt + self.heartbeat - ContinuousClock.now
        if left > .zero, await heard.wait(forBeat: beat, within: left) { return }
        throw HeartbeatFailure.notificationLost
    }

    /// Sends heartbeat `beat` from another of the client's connections; returns when it was
    /// committed, or `nil` if it could not be sent (cancelled while waiting for a connection).
    private func send(beat: UInt64) -> Task<ContinuousClock.Instant?, Never> {
        let notify: PostgresQuery = "SELECT pg_notify(\(table.channel)::text, \("heartbeat \(writer) \(beat)")::text)"
        let use = use
        return Task {
            do {
                try await PostgresLeases.shared.withConnection(of: use) { other in
                    let sent = Flag()
                    let watchdog = close(other, unless: sent, within: heartbeat)
                    defer { watchdog.cancel() }
                    for try await _ in try await other.query(notify, logger: PostgresValueTable.logger) {}
                    sent.set()
                }
                return ContinuousClock.now
            } catch {
                return nil
            }
        }
    }

    /// A flag set once, from any task.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }

    /// Sets the feed's health and, when it changed, signals every key, so streams load again
    /// and see it.
    private func report(_ health: ChangeFeed.Health) {
        let before = feed.health
        switch health {
        case .following: feed.follow()
        case .doubtful: feed.doubt()
        case .failed(let error): feed.fail(error)
        }
        switch (before, health) {
        case (.doubtful, .doubtful): return
        case (.failed(let old), .failed(let new)) where "\(old)" == "\(new)": return
        default: signalEveryKey()
        }
        // What cannot be thrown reaches the app's logs through the core's event hook, once per
        // change of health.
        switch health {
        case .following where listens.load(ordering: .relaxed) > 1:
            ValueStoreEvent.report(
                ValueStoreEvent(
                    .listeningAgain, source: label,
                    message: "listening again on a new connection; every observed key was reloaded"))
        case .failed(let error):
            ValueStoreEvent.report(
                ValueStoreEvent(
                    .cannotListen, severity: .warning, source: label,
                    message: (error as? ValueStoreError)?.reason ?? "\(error)"))
        default:
            break
        }
    }

    /// Why a heartbeat failed.
    enum HeartbeatFailure: Error {
        /// The connection did not answer: it is dead.
        case silent
        /// The connection closed: its notifications ended.
        case closed
        /// It answered, but its own notification never came back.
        case notificationLost
    }
}
#endif
