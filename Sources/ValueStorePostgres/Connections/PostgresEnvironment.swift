#if PostgreSQL
import Foundation
package import PostgresNIO

/// The standard variables libpq reads to find a server (`PGHOST`, `PGPORT`, `PGUSER`,
/// `PGPASSWORD`, `PGDATABASE`, and `PGSSLMODE`), read in one place for the demo, the test
/// helper, the tests and the sync server.
///
/// A variable that is not set takes libpq's default: `localhost`, port 5432, the user's name, no
/// password, a database named for the user. The clients connect without TLS, so a `PGSSLMODE`
/// that demands it is refused rather than ignored.
///
/// ```swift
/// let environment = PostgresEnvironment(ProcessInfo.processInfo.environment)
/// let configuration = try environment.configuration()
/// ```
package struct PostgresEnvironment: Sendable, Equatable {
    /// A variable whose value no client can be configured with, said in a sentence naming it.
    package struct Invalid: Error, CustomStringConvertible, Equatable {
        /// The sentence, such as `PGPORT=eighty is not a port number (0 to 65535)`.
        package var description: String
    }

    /// The variables that name the server; any of them set means a server is named.
    package static let variables = ["PGHOST", "PGPORT", "PGUSER", "PGPASSWORD", "PGDATABASE"]

    package var host: String?
    package var port: String?
    package var user: String?
    package var password: String?
    package var database: String?
    package var sslMode: String?

    /// The variables as `value` reads them, by their names (`"PGHOST"`).
    ///
    /// - Parameter value: The value of a variable, `nil` when it is not set.
    package init(reading value: (_ name: String) -> String?) {
        host = value("PGHOST")
        port = value("PGPORT")
        user = value("PGUSER")
        password = value("PGPASSWORD")
        database = value("PGDATABASE")
        sslMode = value("PGSSLMODE")
    }

    /// The variables in `environment`, the process's by default.
    ///
    /// - Parameter environment: Variables by name.
    package init(_ environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(reading: { environment[$0] })
    }

    /// Whether any of the five ``variables`` is set.
    package var namesServer: Bool {
        [host, port, user, password, database].contains { $0 != nil }
    }

    /// The configuration of a client for the server the variables name, with libpq's defaults
    /// for those not set.
    ///
    /// - Parameters:
    ///   - host: A host to use instead of `PGHOST`, such as a forwarder's.
    ///   - port: A port to use instead of `PGPORT`, such as a forwarder's.
    ///   - password: A password to use instead of `PGPASSWORD`.
    /// - Returns: The configuration, without TLS.
    /// - Throws: ``Invalid`` for a `PGPORT` that is not a port number, or a `PGSSLMODE` that
    ///   demands TLS.
    package func configuration(
        host: String? = nil, port: Int? = nil, password: String? = nil
    ) throws -> PostgresClient.Configuration {
        if let sslMode, !["disable", "allow", "prefer"].contains(sslMode) {
            throw Invalid(
                description: "PGSSLMODE=\(sslMode) is not supported: the server connects without TLS; reach the "
                    + "database over a private network or a TLS proxy, and unset PGSSLMODE")
        }
        let user = user ?? ProcessInfo.processInfo.userName
        return PostgresClient.Configuration(
            host: host ?? self.host ?? "localhost",
            port: try port ?? Self.port(self.port, name: "PGPORT") ?? 5432,
            username: user,
            password: password ?? self.password,
            database: database ?? user,
            tls: .disable
        )
    }

    /// A port number from `text`, `nil` when there is none.
    ///
    /// - Parameters:
    ///   - text: The variable's value.
    ///   - name: The variable's name, for the error.
    /// - Returns: The port, or `nil` when `text` is `nil`.
    /// - Throws: ``Invalid``, naming the variable, for anything but a number from 0 to 65535.
    package static func port(_ text: String?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard let port = Int(text), (0...65_535).contains(port) else {
            throw Invalid(description: "\(name)=\(text) is not a port number (0 to 65535)")
        }
        return port
    }
}
#endif
