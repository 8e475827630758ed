#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres

/// The throwaway server `pg_virtualenv` makes: its variables, clients for it, scratch tables and
/// raw SQL for the tests to look behind the store.
enum PostgresServer {
    /// The command that runs these tests; every failure to find a server names it.
    static let command = "pg_virtualenv swift test --traits PostgreSQL --filter Postgres"

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The client configuration from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`.
    static func configuration(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresClient.Configuration {
        guard let host = environment["PGHOST"], let user = environment["PGUSER"] else {
            throw Missing(
                description:
                    "The PostgreSQL tests need a server: no PGHOST and PGUSER are set. Run them under "
                    + "pg_virtualenv (Debian's postgresql package), which makes a throwaway cluster and "
                    + "sets them: \(command)")
        }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: environment["PGPORT"].flatMap(Int.init) ?? 5432,
            username: user,
            password: environment["PGPASSWORD"],
            database: environment["PGDATABASE"],
            tls: .disable
        )
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// Runs `body` with a running client (one machine), which stops after it.
    static func withClient<Result: Sendable>(
        configuration: PostgresClient.Configuration? = nil,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(
            configuration: try configuration ?? Self.configuration(),
            backgroundLogger: Logger(label: "tests"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// Runs `body` with two clients: two machines sharing one server.
    static func withTwoClients<Result: Sendable>(
        _ body: @Sendable (PostgresClient, PostgresClient) async throws -> Result
    ) async throws -> Result {
        try await withClient { first in
            try await withClient { second in
                try await body(first, second)
            }
        }
    }

    /// A fresh table name, so every test has its own table.
    static func scratchName() -> String {
        "test_\(UInt64.random(in: 0...UInt64.max), radix: 36)"
    }

    /// A created table with a fresh name.
    static func scratchTable(_ client: PostgresClient) async throws -> PostgresValueTable {
        let table = try PostgresValueTable(client: client, name: scratchName())
        try await table.createIfNeeded()
        return table
    }

    /// Runs raw SQL, returning nothing.
    static func execute(_ client: PostgresClient, _ sql: PostgresQuery) async throws {
        try await client.query(sql).drain()
    }

    /// Runs raw SQL that returns one integer.
    static func integer(_ client: PostgresClient, _ sql: PostgresQuery) async throws -> Int {
        var result = 0
        for try await row in try await client.query(sql) {
            result = try row.decode(Int.self)
        }
        return result
    }

    /// The cluster `pg_virtualenv` made, as `pg_ctlcluster` names it: version and name.
    static func cluster() throws -> (version: String, name: String) {
        let environment = ProcessInfo.processInfo.environment
        let port = environment["PGPORT"] ?? "5432"
        let listing = try run("/usr/bin/pg_lsclusters", "--no-header")
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 3, fields[2] == port {
                return (String(fields[0]), String(fields[1]))
            }
        }
        throw Missing(description: "no cluster listens on port \(port): \(listing)")
    }

    /// Restarts the server at once, as a crash would (`pg_ctlcluster … restart -m immediate`).
    static func restartImmediately() throws {
        let (version, name) = try cluster()
        _ = try run("/usr/bin/pg_ctlcluster", version, name, "restart", "-m", "immediate")
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Missing(description: "\(executable) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }
}

/// Waits until `condition` holds, checking every few milliseconds for at most `seconds`; returns
/// whether it held. For effects that reach the test through the server, with no event to await.
func eventually(seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

extension StoredState {
    /// Whether nothing is stored.
    var isAbsent: Bool {
        if case .absent = self { true } else { false }
    }
}

extension StoredStates.Iterator {
    /// The next state that satisfies `predicate`, skipping the others; `nil` if the stream ends.
    mutating func next(where predicate: (StoredState<Value>) -> Bool) async -> StoredState<Value>? {
        while let state = await next() {
            if predicate(state) { return state }
        }
        return nil
    }
}
#endif

#if PostgreSQL
/// Every PostgreSQL suite, one test at a time: they share one server, which some of them restart.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PostgresTests {}
#endif
