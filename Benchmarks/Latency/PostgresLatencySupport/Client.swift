// The client both PostgreSQL latency tools measure through: the server pg_virtualenv made.

import Foundation
public import PostgresNIO

/// A client for the server `pg_virtualenv` made (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
/// `PGDATABASE`), running in a task of its own for as long as the program lives; without those
/// variables the program exits, saying so.
public func runningClientFromEnvironment() -> PostgresClient {
    let environment = ProcessInfo.processInfo.environment
    guard let host = environment["PGHOST"], let user = environment["PGUSER"] else {
        print("no PGHOST and PGUSER: run under pg_virtualenv")
        exit(1)
    }
    let client = PostgresClient(
        configuration: .init(
            host: host, port: environment["PGPORT"].flatMap(Int.init) ?? 5432, username: user,
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"], tls: .disable),
        backgroundLogger: Logger(label: "latency"))
    Task.detached { await client.run() }
    return client
}
