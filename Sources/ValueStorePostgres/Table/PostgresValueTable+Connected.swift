#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStore

extension PostgresValueTable {
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
                PostgresReachability.shared.lost(clientUse)
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
        let use = clientUse
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
                        try await leases.withConnection(of: use) { connection in
                            guard attempt.leased(connection, deadline: bound) else { throw LeaseTimeout() }
                            if leases.needsProof(connection, of: use) {
                                // The listening connection was proved dead: this one may have
                                // died with it, unseen by the store.
                                guard await PostgresLeases.answers(connection, within: proof) else {
                                    throw NotSent(underlying: SilentConnection())
                                }
                                leases.vouch(for: connection, of: use)
                            }
                            PostgresReachability.shared.reached(use)
                            leases.add(1, for: use)
                            defer { leases.add(-1, for: use) }
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
                        try await Self.waitForConnection(of: use, connectTimeout: connectTimeout)
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
}

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
#endif
