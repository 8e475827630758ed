#if PostgreSQL
import PostgresNIO
import ValueStore

// How long an operation waits for a connection, and what it says when none came: a server that
// refused the connection or the login, a busy pool, or a server that cannot be reached.
extension PostgresValueTable {
    /// Returns when the wait for one of `client`'s connections is over: after `connectTimeout`
    /// while a connection is known to be open (the pool is busy), or after 2 s while none is
    /// (the connections the pool holds may be found dead during the wait); at once when a
    /// ``PostgresProbe``, started after 100 ms without a connection, finds the server refusing
    /// the connection or the login, which the pool would only retry later.
    static func waitForConnection(of client: PostgresClientUse, connectTimeout: Duration) async throws {
        let start = ContinuousClock.now
        while true {
            switch PostgresProbe.shared.outcome(of: client) {
            case .refused?, .loginRefused?: return
            case .connected?, .failed?, nil: break
            }
            let waited = ContinuousClock.now - start
            let limit = waitLimit(for: client, timeout: connectTimeout)
            if waited >= limit { return }
            if waited >= PostgresProbe.delay, !PostgresReachability.shared.isReached(client) {
                PostgresProbe.shared.start(client)
            }
            try await Task.sleep(for: min(limit - waited, PostgresProbe.delay))
        }
    }

    /// How long a call waits for one of `client`'s connections: `timeout` while one is known to
    /// be open or the server accepted a probe's (the pool is busy), at most 2 s otherwise.
    private static func waitLimit(for client: PostgresClientUse, timeout: Duration) -> Duration {
        if case .connected? = PostgresProbe.shared.outcome(of: client) {
            return timeout
        }
        return PostgresReachability.shared.wait(for: client, timeout: timeout)
    }

    /// What an operation throws when no connection came: `invalidConfiguration` for a refused
    /// login, naming the user and database (never the password); otherwise `unavailable`, saying
    /// whether the server refused the connection, the pool was busy, or the server could not be
    /// reached.
    func noConnection(store: String) -> ValueStoreError {
        let outcome = PostgresProbe.shared.outcome(of: clientUse)
        let reached = PostgresReachability.shared.isReached(clientUse)
        let timeout = Self.waitLimit(for: clientUse, timeout: connectTimeout)
        if PostgresLeases.shared.count(for: clientUse) == 0, PostgresChanges.shared.listenerCount(client: client) == 0 {
            // None came, and this process holds none, for operations or listening: the pool
            // may hold only dead ones, or none at all.
            PostgresReachability.shared.lost(clientUse)
        }
        switch outcome {
        case .loginRefused(let failure)?:
            let login = PostgresPool.configuration(of: client)
            let user = login.map { "user '\($0.username)'" } ?? "the client's user"
            let database = login?.database.map { "database '\($0)'" } ?? "the user's default database"
            return ValueStoreError(
                .invalidConfiguration, store: store,
                reason:
                    "the server refused the login of \(user) to \(database): \(failure); "
                    + "check the PostgresClient's username, password and database",
                underlyingError: failure)
        case .refused?:
            return ValueStoreError(
                .unavailable, store: store,
                reason:
                    "the server refused the connection: nothing listens at the PostgresClient's host and port "
                    + "(is the server running, and are they right?)",
                underlyingError: PostgresFailure(sqlState: nil, message: "connection refused"))
        case .connected?:
            return ValueStoreError(
                .unavailable, store: store, reason: busyReason(timeout: timeout, accepting: true),
                underlyingError: PostgresFailure(sqlState: nil, message: "no connection within \(timeout)"))
        case .failed?, nil:
            return ValueStoreError(
                .unavailable, store: store,
                reason: reached ? busyReason(timeout: timeout, accepting: false) : unreachableReason(timeout: timeout),
                underlyingError: PostgresFailure(sqlState: nil, message: "no connection within \(timeout)"))
        }
    }

    /// Why no connection came within `timeout` while one was known to be open, or the server
    /// accepted a probe's (`accepting`): the pool's connections were all in use, saying how
    /// many, and how many listening connections hold.
    private func busyReason(timeout: Duration, accepting: Bool) -> String {
        let listening = PostgresChanges.shared.listenerCount(client: client)
        let working = PostgresLeases.shared.count(for: clientUse)
        let maximum = PostgresPool.maximumConnections(of: client)
        if let maximum, working + listening >= maximum {
            return
                "the PostgresClient's pool is busy: all \(maximum) of its connections (maximumConnections) were in use "
                + "for \(timeout), \(listening) held by listening connections (one per observed table) and "
                + "\(working) by value-table operations; raise maximumConnections or observe fewer tables"
        }
        let size = maximum.map { "maximumConnections \($0)" } ?? "maximumConnections"
        let shares =
            "(\(size), \(listening) held by listening connections, \(working) by value-table operations, "
            + "the rest by the app's own work)"
        guard accepting else {
            return
                "no connection within \(timeout): the PostgresClient's pool is busy \(shares) or cannot reach the server"
        }
        return
            "no connection within \(timeout), though the server accepts connections: the PostgresClient's pool is "
            + "busy, all its connections lent \(shares); raise maximumConnections or lend fewer"
    }

    /// Why no connection came within `timeout` while none was known to be open.
    private func unreachableReason(timeout: Duration) -> String {
        "no connection within \(timeout), and none of the PostgresClient's connections is known to be open: "
            + "the server refused or did not answer (is it running, and are the host and port right?)"
    }
}
#endif
