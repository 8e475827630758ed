#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreTestSupport

/// The throwaway server `pg_virtualenv` makes: its variables, clients for it, scratch tables and
/// raw SQL for the tests to look behind the store.
enum PostgresServer {
    /// The command that runs these tests; every failure to find a server names it.
    static let command = "pg_virtualenv swift test --traits PostgreSQL --filter Postgres"

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The client configuration from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`.
    /// - Parameters:
    ///   - environment: Where to read the variables.
    ///   - port: A port to use instead of `PGPORT`, such as one nothing listens on.
    ///   - password: A password to use instead of `PGPASSWORD`.
    /// - Returns: The configuration of a client for the server.
    /// - Throws: `Missing`, naming `pg_virtualenv`, when the variables are not set.
    static func configuration(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        port: Int? = nil,
        password: String? = nil
    ) throws -> PostgresClient.Configuration {
        let variables = PostgresEnvironment(environment)
        guard variables.host != nil, variables.user != nil else {
            throw Missing(
                description:
                    "The PostgreSQL tests need a server: no PGHOST and PGUSER are set. Run them under "
                    + "pg_virtualenv (Debian's postgresql package), which makes a throwaway cluster and "
                    + "sets them: \(command)")
        }
        var configuration = try variables.configuration(port: port, password: password)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// The server's client configuration, connecting instead to `port` on this machine (a
    /// forwarder or a pooler in front of the server) with a pool of at most `maximumConnections`.
    static func configuration(throughLocalPort port: Int, maximumConnections: Int) throws
        -> PostgresClient.Configuration
    {
        let server = try configuration()
        var configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: server.username, password: server.password,
            database: server.database, tls: .disable)
        configuration.options = server.options
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }

    /// The configuration of a client with at most one connection, so that every operation runs on
    /// the connection a test has prepared (or broken).
    static func oneConnection() throws -> PostgresClient.Configuration {
        var configuration = try configuration()
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 1
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

    /// Runs `body` with one table of a scratch name, made, as two machines sharing the server
    /// see it: `here` through one client, `there` through another.
    ///
    /// ```swift
    /// try await PostgresServer.withTwoTables { here, there in
    ///     try await there.store("count", as: Int.self).save(1)
    ///     #expect(try await here.store("count", as: Int.self).load() == 1)
    /// }
    /// ```
    static func withTwoTables<Result: Sendable>(
        _ body: @Sendable (_ here: PostgresValueTable, _ there: PostgresValueTable) async throws -> Result
    ) async throws -> Result {
        try await withTwoClients { first, second in
            let name = scratchName()
            let here = try PostgresValueTable(client: first, name: name)
            try await here.createIfNeeded()
            return try await body(here, try PostgresValueTable(client: second, name: name))
        }
    }

    /// A fresh table name, so every test has its own table.
    static func scratchName() -> String {
        "test_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// A created table with a fresh name.
    static func scratchTable(_ client: PostgresClient) async throws -> PostgresValueTable {
        let table = try PostgresValueTable(client: client, name: scratchName())
        try await table.createIfNeeded()
        return table
    }

    /// Runs raw SQL, returning nothing.
    static func execute(_ client: PostgresClient, _ sql: PostgresQuery) async throws {
        for try await _ in try await client.query(sql) {}
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
    static func cluster() async throws -> (version: String, name: String) {
        let environment = ProcessInfo.processInfo.environment
        let port = environment["PGPORT"] ?? "5432"
        let listing = try await run("/usr/bin/pg_lsclusters", "--no-header")
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 3, fields[2] == port {
                return (String(fields[0]), String(fields[1]))
            }
        }
        throw Missing(description: "no cluster listens on port \(port): \(listing)")
    }

    /// Restarts the server at once, as a crash would (`pg_ctlcluster … restart -m immediate`).
    ///
    /// Through perl, which unblocks every signal first: a child of `Process` inherits the
    /// spawning thread's blocked signals, and a postmaster started with them blocked never
    /// finishes starting.
    ///
    /// It stops, waits until the cluster is listed as down (an immediate stop can return before
    /// the postmaster is gone, and a start then finds it "already running"), then starts.
    static func restartImmediately() async throws {
        let (version, name) = try await cluster()
        try await unblocked("/usr/bin/pg_ctlcluster", version, name, "stop", "-m", "immediate")
        for _ in 0..<300 {
            // `status` exits with an error once the server is down.
            guard let status = try? await run("/usr/bin/pg_ctlcluster", version, name, "status"),
                status.lowercased().contains("server is running")
            else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        try await unblocked("/usr/bin/pg_ctlcluster", version, name, "start")
    }

    /// Runs a command through perl, which unblocks every signal first (see
    /// ``restartImmediately()``).
    private static func unblocked(_ arguments: String...) async throws {
        let script = "sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die; exec @ARGV or die"
        try await runArray("/usr/bin/perl", ["-MPOSIX", "-e", script, "--"] + arguments)
    }

    /// Dumps the tables of `table` (every table named `NAME_*`) to `file`, in pg_dump's custom
    /// format.
    static func dump(_ table: PostgresSyncTable, to file: URL) async throws {
        try await run(
            "/usr/bin/pg_dump", "--format=custom", "--file=\(file.path(percentEncoded: false))",
            "--table=\(table.name)_*")
    }

    /// Restores the tables of `dump` (from ``dump(_:to:)``) over the ones the server holds, in
    /// one transaction that first takes the accounts table's lock, so it never deadlocks with the
    /// table's requests in flight.
    ///
    /// `pg_restore --clean` drops the tables' constraints and the tables themselves one by one,
    /// the accounts table's among the last, each under an exclusive lock held to the end; every
    /// statement of a `PostgresSyncTable` locks the accounts table first (a push's read and
    /// write, a pull, a tombstone collection, a new epoch: the table is in its first `FROM` or
    /// first CTE) and holds it to its transaction's end. So a request in flight that held the
    /// accounts table and waited for a table the restore had dropped blocked the restore's drop
    /// of the accounts table: a deadlock, and the server aborted one of the two, the restore 2
    /// times in 20 with four replicas syncing (`aRestoreWhileReplicasPushAndPullIsNeverADeadlockVictim`).
    /// Taking the accounts table's lock first, the restore waits for the requests in flight,
    /// and the requests that come after it wait for it whole.
    static func restore(_ dump: URL, of table: PostgresSyncTable) async throws {
        let script = dump.deletingLastPathComponent().appending(path: "restore-\(UUID().uuidString).sql")
        defer { try? FileManager.default.removeItem(at: script) }
        try await run(
            "/usr/bin/pg_restore", "--clean", "--file=\(script.path(percentEncoded: false))",
            dump.path(percentEncoded: false))
        try await run(
            "/usr/bin/psql", "--no-psqlrc", "--quiet", "--single-transaction", "--set=ON_ERROR_STOP=1",
            "--dbname=\(PostgresEnvironment().database ?? "postgres")",
            "--command=LOCK TABLE \"\(table.name)_accounts\" IN ACCESS EXCLUSIVE MODE",
            "--file=\(script.path(percentEncoded: false))")
    }

    /// Runs a command and returns what it printed. The output goes to a file, not a pipe: a
    /// server the command starts keeps its output open, and a pipe would never end.
    @discardableResult
    static func run(_ executable: String, _ arguments: String...) async throws -> String {
        try await runArray(executable, arguments)
    }

    /// ``run(_:_:)`` with the arguments in an array.
    @discardableResult
    static func runArray(_ executable: String, _ arguments: [String]) async throws -> String {
        let log = FileManager.default.temporaryDirectory.appending(path: "pg-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path(percentEncoded: false), contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let output = try FileHandle(forWritingTo: log)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let status = await exitStatus(of: process)
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        guard status == 0 else {
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
/// The time limit, on each test (each seed of a chaos test), guards against hangs only: a chaos
/// schedule over HTTP, with its two server processes and five devices, takes most of a minute on
/// a loaded machine, and the limit is the shortest any test may have (Swift Testing applies the
/// shortest of a suite's and its tests' limits).
@Suite(.serialized, .timeLimit(.minutes(2))) struct PostgresTests {}
#endif
