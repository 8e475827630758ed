#if PostgreSQL
import PostgresNIO
import ValueStore

/// What went wrong talking to PostgreSQL, kept as a ``/ValueStore/ValueStoreError``'s underlying error in
/// place of postgres-nio's own error, which can carry the statement, its bind values and the
/// server's detail line (which may quote a row).
///
/// It keeps only what is safe to print: the kind of failure, the SQLSTATE and the server's
/// message, which names objects but never quotes values.
public struct PostgresFailure: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE the server reported, such as `42P01`; `nil` when the failure was the
    /// connection's, not the server's.
    ///
    /// ```swift
    /// if (error.underlyingError as? PostgresFailure)?.sqlState == "42P01" { … }
    /// ```
    public var sqlState: String?

    /// The server's message, or the kind of connection failure.
    public var message: String

    /// The message and, when the server sent one, its SQLSTATE.
    public var description: String {
        sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
    }
}

/// Which step failed, which decides what a lost connection means.
enum PostgresStep {
    /// Reading, or preparing a write that was not sent: nothing happened.
    case read
    /// A write was sent: if the connection is lost now, it may have committed.
    case write
}

extension ValueStoreError {
    /// Classifies an error from postgres-nio or the pool, without quoting values or credentials.
    init(postgres error: any Error, step: PostgresStep, table: PostgresTableName, store: String) {
        if let error = error as? ValueStoreError {
            self = error
            return
        }
        guard let error = error as? PSQLError else {
            self.init(.io, store: store, reason: "PostgreSQL failed", underlyingError: error)
            return
        }
        let failure = PostgresFailure(
            sqlState: error.serverInfo?[.sqlState],
            message: error.serverInfo?[.message] ?? "\(error.code)")
        switch error.code {
        case .server:
            let state = failure.sqlState ?? ""
            switch state {
            case "42P01", "3F000":
                self.init(
                    .invalidConfiguration, store: store,
                    reason: "the table '\(table.name)' does not exist; call createIfNeeded() first",
                    underlyingError: failure)
            case "42703", "42804":
                self.init(
                    .invalidConfiguration, store: store,
                    reason:
                        "the table '\(table.name)' does not have the columns a value table needs "
                        + "(key text, value bytea, version bigint, token uuid); createIfNeeded() makes them, "
                        + "and upgrades a table an earlier release made",
                    underlyingError: failure)
            case "54000":
                self.init(
                    .invalidConfiguration, store: store,
                    reason:
                        "the key is too long for the table's index (PostgreSQL indexes keys up to about 2,700 bytes)",
                    underlyingError: failure)
            case "25006":
                self.init(
                    .unavailable, store: store,
                    reason:
                        "the server refused to write in a read-only transaction (a standby, or a role or "
                        + "database with default_transaction_read_only)",
                    underlyingError: failure)
            case "42501":
                self.init(
                    .invalidConfiguration, store: store,
                    reason: "the role lacks a privilege the table needs: \(failure.message)",
                    underlyingError: failure)
            case _ where state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300":
                // Connection exceptions, an administrator or crash shutdown, too many connections:
                // the server answered with an error, so the statement did not commit.
                self.init(
                    .unavailable, store: store, reason: "the server is not accepting work: \(failure.message)",
                    underlyingError: failure)
            case _ where state.hasPrefix("28"):
                self.init(
                    .invalidConfiguration, store: store, reason: "the server refused the credentials",
                    underlyingError: failure)
            default:
                self.init(
                    .io, store: store, reason: "the server refused the statement: \(failure.message)",
                    underlyingError: failure)
            }
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .messageDecodingFailure,
            .unexpectedBackendMessage:
            switch step {
            case .read:
                self.init(
                    .unavailable, store: store, reason: "the connection to the server was lost",
                    underlyingError: failure)
            case .write:
                self.init(
                    .outcomeUnknown, store: store,
                    reason: "the connection was lost after the write was sent; load to see whether it happened",
                    underlyingError: failure)
            }
        case .clientClosedConnection, .poolClosed:
            self.init(
                .unavailable, store: store, reason: "the PostgresClient is shutting down",
                underlyingError: failure)
        default:
            self.init(.io, store: store, reason: "PostgreSQL failed: \(error.code)", underlyingError: failure)
        }
    }
}

#endif
