// The PostgreSQL modes of the helper, for the multi-process tests of ValueStorePostgres. They
// connect with the variables `pg_virtualenv` sets (PGHOST, PGPORT, PGUSER, PGPASSWORD,
// PGDATABASE).
//
//     ValueStoreTestHelper postgres increment TABLE KEY COUNT  updates a counter COUNT times,
//                                                              then prints "done"
//     ValueStoreTestHelper postgres update-loop TABLE KEY      updates a counter until killed,
//                                                              printing each value it committed
//     ValueStoreTestHelper postgres memory TABLE COUNT WAY     runs COUNT loads of one key, one
//                                                              after another, and prints
//                                                              "rss BEFORE AFTER" in bytes, before
//                                                              (after 1,000 loads to warm up) and
//                                                              after them; WAY is "store" (the
//                                                              table's store), "missing" (a store
//                                                              of a table never made, each load
//                                                              failing) or "postgres-nio" (the
//                                                              same SELECT through client.query)

import Foundation

#if PostgreSQL
import PostgresNIO
import ValueStore
import ValueStorePostgres

/// The configuration of a client for the server the variables name, or for `host` and `port`
/// (a test's forwarder to it).
func postgresConfiguration(host: String? = nil, port: Int? = nil) throws -> PostgresClient.Configuration {
    try PostgresEnvironment().configuration(host: host, port: port)
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
        case "memory" where arguments.count == 4:
            let count = Int(arguments[2])!
            let rss = try await residentMemory(of: arguments[3], table: table, count: count)
            print("rss \(rss.before) \(rss.after)")
        case "update-loop" where arguments.count == 3:
            while true {
                let value = try await counter.update((), { value in value = (value ?? 0) + 1 })
                FileHandle.standardOutput.write(Data("\(value ?? 0)\n".utf8))
            }
        default:
            FileHandle.standardError.write(
                Data(
                    "usage: postgres increment TABLE KEY COUNT | update-loop TABLE KEY | memory TABLE COUNT WAY\n".utf8)
            )
            exit(64)
        }
    }
}
/// The resident memory before and after `count` loads of one key made `way`, after 1,000 to warm
/// up: the table's store, a store of a table never made (each load fails), or postgres-nio's own
/// `client.query` of the same row.
func residentMemory(
    of way: String,
    table: PostgresValueTable,
    count: Int
) async throws -> (before: Int, after: Int) {
    let load: () async throws -> Void
    switch way {
    case "store":
        let store = table.store("memory", as: Int.self)
        try await table.createIfNeeded()
        try await store.save(1)
        load = { _ = try await store.load() }
    case "missing":
        let store = table.store("memory", as: Int.self)
        load = {
            do {
                _ = try await store.load()
                fatalError("the table \(table.name) exists")
            } catch let error as ValueStoreError where error.code == .invalidConfiguration {}
        }
    case "postgres-nio":
        try await table.createIfNeeded()
        try await table.store("memory", as: Int.self).save(1)
        let client = table.client
        let query = PostgresQuery(unsafeSQL: "SELECT value FROM \(table.name) WHERE key = 'memory'")
        load = {
            for try await row in try await client.query(query) {
                _ = try row.decode(Data.self)
            }
        }
    default:
        fatalError("no such way: \(way)")
    }
    for _ in 0..<1_000 {
        try await load()
    }
    let before = residentBytes()
    let traces = ProcessInfo.processInfo.environment["VALUESTORE_MEMORY_TRACE"] != nil
    for done in 0..<count {
        try await load()
        if traces, done % 5_000 == 4_999 {
            FileHandle.standardError.write(Data("\(done + 1): rss \(residentBytes() >> 10) KB\n".utf8))
        }
    }
    return (before, residentBytes())
}

/// This process's resident memory in bytes, from `/proc/self/statm` (its second field, in pages).
func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
#else
func postgres(_ arguments: [String]) async throws {
    FileHandle.standardError.write(Data("built without the PostgreSQL trait\n".utf8))
    exit(64)
}
#endif
