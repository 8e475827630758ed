#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization
import ValueStore

// The statements behind every store of a table. Keys and values are always bind parameters; the
// table name is validated and quoted by `PostgresTableName`. Each write is one statement, one
// round trip: its one-time filter sets `synchronous_commit` for its own transaction, it writes,
// and its RETURNING clause notifies, so the notification is delivered at commit and never for a
// rollback. (The filter and the notification ride on the write itself rather than on CTEs around
// it: the server plans and runs that in about two thirds of the time.)
extension PostgresValueTable {
    func load(_ key: String) async throws -> Data {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        let statement: PostgresQuery = "SELECT value FROM \(unescaped: table.quoted) WHERE key = \(key)::text"
        let value: Data?? = try await connected(step: .read, store: store) { connection in
            let rows = try await PostgresPreparedQuery.run(statement, on: connection)
            var value: Data??
            for try await row in rows {
                value = .some(try row.decode(Data?.self))
            }
            return value
        }
        guard let value else { throw ValueStoreError(.notFound, store: store) }
        guard let value else { throw Self.nullValue(store: store) }
        return value
    }

    /// The error for a row whose value is NULL, which no store of the table writes.
    static func nullValue(store: String) -> ValueStoreError {
        ValueStoreError(
            .corrupted, store: store,
            reason:
                "the row's value is NULL, which no store writes; another program wrote it (the column should be NOT NULL)"
        )
    }

    func save(_ value: Data, for key: String) async throws {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        try OpenPostgresUpdate.refuseWrite(to: turn(key, in: table), store: store)
        let identifier = PostgresKey.identifier(key)
        let statement: PostgresQuery = """
            INSERT INTO \(unescaped: table.quoted) AS stored (key, value, version, token)
            SELECT \(key)::text, \(ByteBuffer(bytes: value))::bytea, 1, gen_random_uuid() WHERE \(unescaped: Self.durable) IS NOT NULL
            ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = stored.version + 1, token = excluded.token, updated_at = now()
            RETURNING pg_notify(\(table.channel)::text, stored.version || ' ' || \(writer)::text || ' ' || \(identifier)::text)
            """
        try await write(statement, table: table, store: store, keys: [identifier])
    }

    func remove(_ key: String) async throws {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        try OpenPostgresUpdate.refuseWrite(to: turn(key, in: table), store: store)
        let identifier = PostgresKey.identifier(key)
        let statement: PostgresQuery = """
            DELETE FROM \(unescaped: table.quoted)
            WHERE key = \(key)::text AND \(unescaped: Self.durable) IS NOT NULL
            RETURNING pg_notify(\(table.channel)::text, (version + 1) || ' ' || \(writer)::text || ' ' || \(identifier)::text)
            """
        try await write(statement, table: table, store: store, keys: [identifier])
    }

    /// Reads the value and its token, runs `body` with nothing locked on the server and no
    /// transaction open, and writes only if the row is still the one read; otherwise it starts
    /// again. Updates of the key in this process take turns (``PostgresUpdateTurns``).
    ///
    /// Every write gives the row a new random token, so a row removed and saved again, or written
    /// by a promoted standby that reused a version, never passes for the one the body read. The
    /// version is checked too, for writers of the first release, which keep the token.
    func update(
        _ key: String,
        _ body: (_ value: inout Data?) async throws -> Void
    ) async throws -> Data? {
        let store = label(key)
        try PostgresKey.validate(key, store: store)
        let table = try await resolvedTable()
        return try await PostgresUpdateTurns.shared.taking(turn(key, in: table), store: store) {
            try await updateInTurn(key, table: table, store: store, body)
        }
    }

    private func updateInTurn(
        _ key: String,
        table: PostgresTableName,
        store: String,
        _ body: (_ value: inout Data?) async throws -> Void
    ) async throws -> Data? {
        let identifier = PostgresKey.identifier(key)
        let read: PostgresQuery =
            "SELECT value, version, token FROM \(unescaped: table.quoted) WHERE key = \(key)::text"
        while true {
            let current: (value: Data?, version: Int64, token: UUID)? = try await connected(step: .read, store: store) {
                connection in
                var current: (Data?, Int64, UUID)?
                for try await row in try await PostgresPreparedQuery.run(read, on: connection) {
                    current = try row.decode((Data?, Int64, UUID).self)
                }
                return current
            }
            if let current, current.value == nil {
                throw Self.nullValue(store: store)
            }
            var value = current?.value
            try await body(&value)
            // A task cancelled while the body ran writes nothing.
            try Task.checkCancellation()
            let statement: PostgresQuery
            switch (current, value) {
            case (nil, nil):
                return nil
            case (nil, let new?):
                statement = """
                    INSERT INTO \(unescaped: table.quoted) (key, value, version, token)
                    SELECT \(key)::text, \(ByteBuffer(bytes: new))::bytea, 1, gen_random_uuid() WHERE \(unescaped: Self.durable) IS NOT NULL
                    ON CONFLICT (key) DO NOTHING
                    RETURNING pg_notify(\(table.channel)::text, version || ' ' || \(writer)::text || ' ' || \(identifier)::text)
                    """
            case (let old?, nil):
                statement = """
                    DELETE FROM \(unescaped: table.quoted)
                    WHERE key = \(key)::text AND version = \(old.version)::int8 AND token = \(old.token)::uuid
                        AND \(unescaped: Self.durable) IS NOT NULL
                    RETURNING pg_notify(\(table.channel)::text, (version + 1) || ' ' || \(writer)::text || ' ' || \(identifier)::text)
                    """
            case (let old?, let new?):
                statement = """
                    UPDATE \(unescaped: table.quoted)
                    SET value = \(ByteBuffer(bytes: new))::bytea, version = version + 1, token = gen_random_uuid(), updated_at = now()
                    WHERE key = \(key)::text AND version = \(old.version)::int8 AND token = \(old.token)::uuid
                        AND \(unescaped: Self.durable) IS NOT NULL
                    RETURNING pg_notify(\(table.channel)::text, version || ' ' || \(writer)::text || ' ' || \(identifier)::text)
                    """
            }
            do {
                if try await write(statement, table: table, store: store, keys: [identifier]) {
                    return value
                }
                // Another writer changed the row since it was read: read it again.
            } catch let error as ValueStoreError where (error.underlyingError as? PostgresFailure)?.isRetryable == true
            {
                // A serialization failure or deadlock rolled the write back: read again.
            }
        }
    }

    /// What identifies `key`'s updates and writes among this process's, for
    /// ``PostgresUpdateTurns``: the client, the resolved table and the key.
    func turn(_ key: String, in table: PostgresTableName) -> String {
        "\(writer)\u{0}\(table.name)\u{0}\(key)"
    }

    /// Runs a write statement and signals this process's streams of `keys`; returns whether it
    /// changed a row.
    @discardableResult
    func write(_ statement: PostgresQuery, table: PostgresTableName, store: String, keys: [String]) async throws
        -> Bool
    {
        let changed: Bool
        do {
            let client = client
            let settled: @Sendable () -> Void = {
                PostgresChanges.shared.didWrite(client: client, table: table, keys: keys)
            }
            changed = try await connected(step: .write, store: store, settled: settled) { connection in
                var changed = false
                for try await _ in try await PostgresPreparedQuery.run(statement, on: connection) {
                    changed = true
                }
                return changed
            }
        } catch let error as ValueStoreError where error.code == .outcomeUnknown {
            // It may have happened: observers reload, which costs one load if it did not.
            PostgresChanges.shared.didWrite(client: client, table: table, keys: keys)
            throw error
        }
        if changed {
            PostgresChanges.shared.didWrite(client: client, table: table, keys: keys)
        }
        return changed
    }

    /// Borrows a connection, waiting at most ``connectTimeout`` for it, and runs `operation` on
    /// it within ``operationTimeout``, classifying every failure as a
    /// ``/ValueStore/ValueStoreError``.
    ///
    /// The wait is bounded here, not by the pool, which keeps a request queued while it retries
    /// connecting (for up to a minute) and may not let go of it when cancelled. The lease runs in
    /// a task of its own; once the wait is over, a connection that arrives later runs nothing.
    ///
    /// Cancelling returns at once: `CancellationError` while waiting for a connection or reading,
    /// ``/ValueStore/ValueStoreError/Code/outcomeUnknown`` once a write has a connection (it is sent
    /// then, and may commit). Cancelling, or running past ``operationTimeout``, also asks the
    /// server to cancel the statement (`pg_cancel_backend`, through another connection), and
    /// closes the connection if the statement has not ended a second later; where the store
    /// cannot be sure which server process runs the statement (``PostgresBackends``), it closes
    /// the connection at once instead. An operation whose
    /// caller stopped waiting is left to end on the server, and `settled` runs once it has, so a
    /// write's observers hear of it again then.
    ///
    /// A read whose connection turns out to be lost (a pooled connection the server or the
    /// network dropped, or one closed here because it went silent) is tried again, up to twice.
    /// After a listening connection of the client was proved dead, each connection answers a
    /// round trip within ``heartbeatInterval`` (at most 1 s) before anything is sent on it; one
    /// that does not is closed and another borrowed, not counted as a try
    /// (``PostgresLeases/needsProof(_:of:)``).
    func connected<Result: Sendable>(
        step: PostgresStep,
        store: String,
        settled: (@Sendable () -> Void)? = nil,
        _ operation: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var tries = 0
        var silent = 0
        while true {
            tries += 1
            do {
                return try await connectedOnce(step: step, store: store, settled: settled, operation)
            } catch let error as LostConnection where error.underlying is SilentConnection && silent < 20 {
                // A connection that died in a partition, closed before anything was sent on it:
                // the next is not another try.
                silent += 1
                tries -= 1
            } catch let error as LostConnection {
                PostgresReachability.shared.lost(client)
                // The pool may lend the connection just closed once more before it notices.
                guard tries < 3, !Task.isCancelled else {
                    guard error.underlying is PSQLError else {
                        throw ValueStoreError(
                            .unavailable, store: store,
                            reason:
                                "the server did not answer within \(operationTimeout) (operationTimeout) on "
                                + "\(tries) connections, each closed after it",
                            underlyingError: PostgresFailure(
                                sqlState: nil, message: "no answer within \(operationTimeout)"))
                    }
                    throw ValueStoreError(postgres: error.underlying, step: step, table: table, store: store)
                }
            }
        }
    }

    /// One attempt of ``connected(step:store:settled:_:)``; a read that lost its connection
    /// throws ``LostConnection``.
    private func connectedOnce<Result: Sendable>(
        step: PostgresStep,
        store: String,
        settled: (@Sendable () -> Void)?,
        _ operation: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let client = client
        let connectTimeout = connectTimeout
        let bound = operationTimeout
        let attempt = LeaseAttempt<Result>(cancelsOperation: step == .read, settled: settled)
        let leases = PostgresLeases.shared
        // How long a connection lent after a proof of death has to answer its first round trip.
        let proof = min(heartbeatInterval, .seconds(1))
        let table = self
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    attempt.start(continuation: continuation) {
                        try await leases.withConnection(of: client) { connection in
                            guard attempt.leased(connection, deadline: bound) else { throw LeaseTimeout() }
                            if leases.needsProof(connection, of: client) {
                                // The listening connection was proved dead: this one may have
                                // died with it, unseen by the store.
                                guard await PostgresLeases.answers(connection, within: proof) else {
                                    throw NotSent(underlying: SilentConnection())
                                }
                                leases.vouch(for: connection, of: client)
                            }
                            PostgresReachability.shared.reached(client)
                            leases.add(1, for: client)
                            defer { leases.add(-1, for: client) }
                            let backend: Int32?
                            do {
                                backend = try await PostgresBackends.shared.pid(of: connection)
                            } catch {
                                // Nothing was sent yet, whatever the step.
                                throw NotSent(underlying: error)
                            }
                            if let backend {
                                attempt.interrupt = { await table.cancelOnServer(backend, store: store) }
                            } else {
                                // The process may be another client's (a pooler lends it): only
                                // closing the connection stops nothing but this statement.
                                attempt.interrupt = { try? await connection.close() }
                            }
                            return try await operation(connection)
                        }
                    } timer: {
                        try await Self.waitForConnection(of: client, connectTimeout: connectTimeout)
                    }
                }
            } onCancel: {
                attempt.cancel()
            }
        } catch is LeaseTimeout {
            throw noConnection(store: store)
        } catch is LeaseCancelled where step == .write {
            throw Self.cancelledAfterSending(store: store)
        } catch is LeaseCancelled {
            throw CancellationError()
        } catch  where step == .read && attempt.wasOverdue {
            // The statement was stopped: cancelled on the server, or its connection closed when
            // it did not end, which is a dead connection: try another.
            let underlying = (error as? NotSent)?.underlying ?? error
            if let lost = underlying as? PSQLError, lost.isLostConnection || lost.code == .clientClosedConnection {
                throw LostConnection(underlying: lost)
            }
            if underlying is LeaseOverdue {
                throw LostConnection(underlying: underlying)
            }
            throw ValueStoreError(
                .unavailable, store: store,
                reason: "the server did not answer within \(bound) (operationTimeout); the statement was cancelled",
                underlyingError: PostgresFailure(sqlState: nil, message: "no answer within \(bound)"))
        } catch is LeaseOverdue {
            let failure = PostgresFailure(sqlState: nil, message: "no answer within \(bound)")
            switch step {
            case .read:
                throw ValueStoreError(
                    .unavailable, store: store,
                    reason:
                        "the server did not answer within \(bound) (operationTimeout); the statement was cancelled",
                    underlyingError: failure)
            case .write:
                throw ValueStoreError(
                    .outcomeUnknown, store: store,
                    reason:
                        "the server did not answer within \(bound) (operationTimeout) after the write was sent; "
                        + "the statement was cancelled, but may have committed first: load to see whether it happened",
                    underlyingError: failure)
            }
        } catch is CancellationError where step == .write && attempt.wasLeased {
            throw Self.cancelledAfterSending(store: store)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as NotSent {
            if error.underlying is SilentConnection {
                throw LostConnection(underlying: error.underlying)
            }
            if let lost = error.underlying as? PSQLError, lost.isLostConnection || lost.code == .clientClosedConnection
            {
                throw LostConnection(underlying: lost)
            }
            throw ValueStoreError(postgres: error.underlying, step: .read, table: self.table, store: store)
        } catch let error as PSQLError
            where step == .read && (error.isLostConnection || error.code == .clientClosedConnection)
        {
            throw LostConnection(underlying: error)
        } catch  where !attempt.wasLeased && !(error is PSQLError) {
            // The pool's own errors: cancelled while waiting, shut down, or failing to connect.
            if Task.isCancelled {
                throw CancellationError()
            }
            throw ValueStoreError(
                .unavailable, store: store,
                reason: "could not get a connection from the PostgresClient (is it running?)",
                underlyingError: PostgresFailure(sqlState: nil, message: "\(error)"))
        } catch {
            throw ValueStoreError(postgres: error, step: step, table: self.table, store: store)
        }
    }

    /// Asks the server to cancel what process `backend` runs, through another connection.
    private func cancelOnServer(_ backend: Int32, store: String) async {
        _ = try? await connectedOnce(step: .read, store: store, settled: nil) { other in
            let cancel: PostgresQuery = "SELECT pg_cancel_backend(\(backend))"
            for try await _ in try await other.query(cancel, logger: Self.logger) {}
        }
    }

    /// A write cancelled once it had a connection: it was sent, and may commit.
    private static func cancelledAfterSending(store: String) -> ValueStoreError {
        ValueStoreError(
            .outcomeUnknown, store: store,
            reason: "the task was cancelled after the write was sent; load to see whether it happened",
            underlyingError: PostgresFailure(sqlState: nil, message: "cancelled after the write was sent"))
    }

    /// What a key's store is called in errors: `PostgreSQL table 'app_values', key 'flags'`.
    /// A key over 200 bytes is quoted by its first 100 bytes, its length and its hash.
    func label(_ key: String) -> String {
        "\(label), key \(PostgresKey.quoted(key))"
    }
}

/// One bounded wait for a connection: the lease and a timer race, and exactly one of them
/// finishes the caller's continuation.
private final class LeaseAttempt<Result: Sendable>: Sendable {
    private enum Phase {
        /// Waiting for a connection.
        case waiting
        /// A connection arrived in time: the operation runs, and its outcome is the answer.
        case leased
        /// The timer or the caller's cancellation came first: nothing runs any more.
        case over
    }

    private struct State {
        var phase = Phase.waiting
        var continuation: CheckedContinuation<Result, any Error>?
        var work: Task<Void, Never>?
        /// Waits ``PostgresValueTable/connectTimeout`` for a connection.
        var timer: Task<Void, Never>?
        /// Waits ``PostgresValueTable/operationTimeout`` once the connection came.
        var deadline: Scheduled<Void>?
        var cancelled = false
        /// The connection the operation runs on.
        var connection: PostgresConnection?
        /// Cancels the statement on the server; set once the connection's backend is known.
        var interrupt: (@Sendable () async -> Void)?
        /// Whether the operation ran past its deadline.
        var overdue = false
        /// Whether the caller stopped waiting while the operation ran, so the statement is to be
        /// stopped as soon as it can be.
        var interrupting = false
        var done = false
    }

    private let state = Mutex(State())
    private let cancelsOperation: Bool
    private let settled: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - cancelsOperation: Whether the caller's cancellation cancels a running operation (a
    ///     read), or leaves it to finish on the server (a write, which may commit).
    ///   - settled: Called when an operation finishes after its caller stopped waiting.
    init(cancelsOperation: Bool, settled: (@Sendable () -> Void)?) {
        self.cancelsOperation = cancelsOperation
        self.settled = settled
    }

    /// Starts the lease and the timer; the first to finish resumes `continuation`.
    func start(
        continuation: CheckedContinuation<Result, any Error>,
        lease: @escaping @Sendable () async throws -> Result,
        timer: @escaping @Sendable () async throws -> Void
    ) {
        // The continuation first: the lease may finish before the tasks' handles are stored.
        state.withLock { $0.continuation = continuation }
        let work = Task {
            do {
                self.finish(.success(try await lease()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let clock = Task {
            do {
                try await timer()
            } catch {
                return  // cancelled: the lease finished first
            }
            self.expire()
        }
        let (cancelled, leased) = state.withLock { state in
            state.work = work
            state.timer = clock
            return (state.cancelled, state.phase != .waiting)
        }
        if leased {
            clock.cancel()  // the connection came before the clock was stored
        }
        if cancelled {
            cancel()
        }
    }

    /// Called with the connection: whether the operation may still run. From now on the
    /// operation has `deadline` to end.
    func leased(_ connection: PostgresConnection, deadline: Duration) -> Bool {
        let connectTimer: Task<Void, Never>?? = state.withLock { state in
            guard state.phase == .waiting else { return nil }
            state.phase = .leased
            state.connection = connection
            return .some(state.timer)
        }
        guard let connectTimer else { return false }
        connectTimer?.cancel()
        // A timer of the connection's event loop, which cancelling removes, rather than a task
        // that sleeps: a cancelled sleep keeps its timer, and the memory it holds, until the
        // deadline it no longer waits for, so every operation held some for operationTimeout.
        let overdue = connection.eventLoop.scheduleTask(in: TimeAmount(deadline)) { self.overdue() }
        let finished = state.withLock { state in
            state.deadline = overdue
            return state.done
        }
        if finished {
            overdue.cancel()
        }
        return true
    }

    /// How to cancel the statement on the server; runs at once if the caller already stopped
    /// waiting.
    var interrupt: (@Sendable () async -> Void)? {
        get { state.withLock { $0.interrupt } }
        set {
            let now = state.withLock { state in
                state.interrupt = newValue
                return state.interrupting && !state.done
            }
            if now, let newValue {
                Task { await newValue() }
            }
        }
    }

    /// Whether the operation ran past its deadline.
    var wasOverdue: Bool {
        state.withLock { $0.overdue }
    }

    /// Stops the statement: cancels it on the server if its backend is known, and closes its
    /// connection if it has not ended a second later (the connection may be dead, and the
    /// cancel never reach it).
    private func stopStatement() async {
        let (interrupt, done) = state.withLock { ($0.interrupt, $0.done) }
        guard !done else { return }
        await interrupt?()
        try? await Task.sleep(for: .seconds(1))
        let connection = state.withLock { $0.done ? nil : $0.connection }
        try? await connection?.close()
    }

    /// Whether a connection arrived in time.
    var wasLeased: Bool {
        state.withLock { $0.phase == .leased }
    }

    private func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, timer, deadline, abandoned) = state.withLock { state in
            defer { state.continuation = nil }
            state.done = true
            return (
                state.continuation, state.timer, state.deadline, state.continuation == nil && state.phase == .leased
            )
        }
        timer?.cancel()
        deadline?.cancel()
        continuation?.resume(with: result)
        if abandoned {
            settled?()
        }
    }

    private func expire() {
        let expired: (CheckedContinuation<Result, any Error>?, Task<Void, Never>?)? = state.withLock { state in
            guard state.phase == .waiting else { return nil }
            state.phase = .over
            defer { state.continuation = nil }
            return (state.continuation, state.work)
        }
        guard let (continuation, work) = expired else { return }
        work?.cancel()
        continuation?.resume(throwing: LeaseTimeout())
    }

    /// The operation ran past its deadline: the caller hears at once, and the statement is
    /// stopped.
    ///
    /// A read's caller hears how the stopped statement ended (so a dead connection, closed
    /// here, can be told from a statement the server cancelled), or `LeaseOverdue` if it does
    /// not end a second after its connection was closed.
    private func overdue() {
        let overdue: CheckedContinuation<Result, any Error>? = state.withLock { state in
            guard state.phase == .leased, let continuation = state.continuation else { return nil }
            state.interrupting = true
            state.overdue = true
            if cancelsOperation {
                return nil
            }
            state.continuation = nil
            return continuation
        }
        overdue?.resume(throwing: LeaseOverdue())
        guard state.withLock({ $0.overdue }) else { return }
        Task {
            await self.stopStatement()
            guard self.cancelsOperation else { return }
            try? await Task.sleep(for: .seconds(1))
            let continuation = self.state.withLock { state in
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(throwing: LeaseOverdue())
        }
    }

    /// The caller was cancelled: it hears at once (`CancellationError` while waiting,
    /// `LeaseCancelled` once a connection runs the operation), and the operation is cancelled.
    func cancel() {
        let (work, timer, continuation, phase, interrupt) = state.withLock { state in
            state.cancelled = true
            let phase = state.phase
            if phase == .waiting {
                state.phase = .over
            }
            let interrupting = phase == .leased && state.continuation != nil && !state.done
            if interrupting {
                state.interrupting = true
            }
            defer { state.continuation = nil }
            return (state.work, state.timer, state.continuation, phase, interrupting)
        }
        switch phase {
        case .waiting, .over: continuation?.resume(throwing: CancellationError())
        case .leased: continuation?.resume(throwing: LeaseCancelled())
        }
        if phase != .leased || cancelsOperation {
            work?.cancel()
        }
        timer?.cancel()
        if interrupt {
            Task { await self.stopStatement() }
        }
    }
}

/// The caller was cancelled while its operation ran on a connection.
private struct LeaseCancelled: Error {}

/// The operation ran past ``PostgresValueTable/operationTimeout``.
private struct LeaseOverdue: Error {}

/// A failure before the operation sent anything.
private struct NotSent: Error {
    var underlying: any Error
}

/// A connection lent after a proof of death did not answer its first round trip, and was closed.
private struct SilentConnection: Error {}

/// A read's connection was lost: it may be tried on another.
struct LostConnection: Error {
    /// postgres-nio's error, or `LeaseOverdue` for a connection that went silent.
    var underlying: any Error
}

extension PSQLError {
    /// The connection broke: closed by the server, reset, or failed.
    var isLostConnection: Bool {
        switch code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown: true
        default: false
        }
    }
}

private struct LeaseTimeout: Error {}

extension PostgresFailure {
    /// A serialization failure or a deadlock: the write rolled back and may be tried again.
    var isRetryable: Bool {
        sqlState == "40001" || sqlState == "40P01"
    }
}
#endif
