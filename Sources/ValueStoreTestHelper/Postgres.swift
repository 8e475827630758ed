// The PostgreSQL modes of the helper, for the multi-process tests of ValueStorePostgres. They
// connect with the variables `pg_virtualenv` sets (PGHOST, PGPORT, PGUSER, PGPASSWORD,
// PGDATABASE).
//
//     ValueStoreTestHelper postgres increment TABLE KEY COUNT  updates a counter COUNT times,
//                                                              then prints "done"
//     ValueStoreTestHelper postgres update-loop TABLE KEY      updates a counter until killed,
//                                                              printing each value it committed

import Foundation

#if PostgreSQL
import PostgresNIO
import ValueStore
import ValueStorePostgres

/// The configuration of a client for the server the variables name, or for `host` and `port`
/// (a test's forwarder to it).
func postgresConfiguration(host: String? = nil, port: Int? = nil) -> PostgresClient.Configuration {
    let environment = ProcessInfo.processInfo.environment
    return PostgresClient.Configuration(
        host: host ?? environment["PGHOST"] ?? "localhost",
        port: port ?? environment["PGPORT"].flatMap(Int.init) ?? 5432,
        username: environment["PGUSER"] ?? "postgres",
        password: environment["PGPASSWORD"],
        database: environment["PGDATABASE"],
        tls: .disable
    )
}

/// Runs `body` with a running client for `configuration`, which stops after it.
func withPostgresClient<Result: Sendable>(
    _ configuration: PostgresClient.Configuration,
    _ body: (PostgresClient) async throws -> Result
) async throws -> Result {
    let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "helper"))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

func postgres(_ arguments: [String]) async throws {
    try await withPostgresClient(postgresConfiguration()) { client in
        let table = try PostgresValueTable(client: client, name: arguments[1])
        let counter = table.store(arguments[2], as: Int.self)
        switch arguments[0] {
        case "increment" where arguments.count == 4:
            for _ in 0..<Int(arguments[3])! {
                _ = try await counter.update((), { value in value = (value ?? 0) + 1 })
            }
            print("done")
        case "update-loop" where arguments.count == 3:
            while true {
                let value = try await counter.update((), { value in value = (value ?? 0) + 1 })
                FileHandle.standardOutput.write(Data("\(value ?? 0)\n".utf8))
            }
        default:
            FileHandle.standardError.write(
                Data("usage: postgres increment TABLE KEY COUNT | update-loop TABLE KEY\n".utf8))
            exit(64)
        }
    }
}
#else
func postgres(_ arguments: [String]) async throws {
    FileHandle.standardError.write(Data("built without the PostgreSQL trait\n".utf8))
    exit(64)
}
#endif
