// The client the PostgreSQL benchmarks and both latency tools measure through: the server
// pg_virtualenv made.

import Foundation
public import PostgresNIO

/// A client for the server `pg_virtualenv` made (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
/// `PGDATABASE`), running in a task of its own for as long as the program lives, logging as
/// `label`; `nil` without those variables. The benchmarks and both latency tools read them here.
public func runningClient(label: String) -> PostgresClient? {
    let environment = ProcessInfo.processInfo.environment
    guard let host = environment["PGHOST"], let user = environment["PGUSER"] else { return nil }
    let client = PostgresClient(
        configuration: .init(
            host: host, port: environment["PGPORT"].flatMap(Int.init) ?? 5432, username: user,
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"], tls: .disable),
        backgroundLogger: Logger(label: label))
    Task.detached { await client.run() }
    return client
}

/// ``runningClient(label:)`` for a latency tool, which cannot run without it: without the
/// variables the program exits, saying so.
public func runningClientFromEnvironment() -> PostgresClient {
    guard let client = runningClient(label: "latency") else {
        print("no PGHOST and PGUSER: run under pg_virtualenv")
        exit(1)
    }
    return client
}
