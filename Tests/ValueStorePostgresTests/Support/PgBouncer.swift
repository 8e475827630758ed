#if PostgreSQL
import Foundation
import PostgresNIO
import ValueStorePostgres

/// A PgBouncer in front of the `pg_virtualenv` server, started for one test: Debian's
/// `pgbouncer` (1.18, which has no `max_prepared_statements`) in the pool mode asked for.
///
/// ```swift
/// let bouncer = try await PgBouncer.start(poolMode: "transaction")
/// defer { Task { try? await bouncer.stop() } }
/// let configuration = try bouncer.configuration(maximumConnections: 8)
/// ```
struct PgBouncer {
    /// The temporary directory holding its configuration, log and pid file.
    let directory: String
    /// The TCP port it listens on, on `127.0.0.1`.
    let port: Int

    /// Starts one, in `poolMode` (`session` or `transaction`), with at most `serverConnections`
    /// connections to the server; returns once it accepts connections.
    static func start(poolMode: String, serverConnections: Int = 4) async throws -> PgBouncer {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/pgbouncer") else {
            throw PostgresServer.Missing(
                description:
                    "these tests need PgBouncer: apt-get install pgbouncer (.ci/run installs it with the server)")
        }
        let server = try PostgresServer.configuration()
        let environment = ProcessInfo.processInfo.environment
        let directory = FileManager.default.temporaryDirectory.appending(path: "pgbouncer-\(UUID().uuidString)")
            .path(percentEncoded: false)
        let port = try PostgresStandby.freePort()
        let configuration = """
            [databases]
            * = host=\(environment["PGHOST"] ?? "localhost") port=\(server.port ?? 5432)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(directory)/users.txt
            pool_mode = \(poolMode)
            default_pool_size = \(serverConnections)
            max_client_conn = 100
            ignore_startup_parameters = extra_float_digits
            logfile = \(directory)/log
            pidfile = \(directory)/pid
            """
        try await PostgresStandby.shell(
            """
            set -e
            mkdir -p '\(directory)'
            cat > '\(directory)/pgbouncer.ini' <<'INI'
            \(configuration)
            INI
            printf '"%s" "%s"\\n' '\(server.username)' '\(server.password ?? "")' > '\(directory)/users.txt'
            chown -R postgres '\(directory)'
            runuser -u postgres -- /usr/sbin/pgbouncer -d '\(directory)/pgbouncer.ini'
            for i in $(seq 100); do [ -s '\(directory)/pid' ] && break; sleep 0.05; done
            """)
        let bouncer = PgBouncer(directory: directory, port: port)
        // Ready once a connection through it answers.
        let ready = try await PostgresServer.withClient(configuration: bouncer.configuration(maximumConnections: 1)) {
            client in
            await eventually { (try? await PostgresServer.integer(client, "SELECT 1")) == 1 }
        }
        guard ready else {
            throw PostgresServer.Missing(description: "PgBouncer did not answer within 10 s; see \(directory)/log")
        }
        return bouncer
    }

    /// Runs `body` with a PgBouncer in `poolMode` started for it, a client of the server itself
    /// (`direct`), a scratch table made through that client, and a client of the pooler with at
    /// most `maximumConnections`; stops the pooler once `body` ends, whatever it throws.
    ///
    /// ```swift
    /// try await PgBouncer.withScratchTable(poolMode: "transaction", maximumConnections: 8) {
    ///     _, direct, table, client in
    ///     let pooled = try PostgresValueTable(client: client, name: table.name)
    /// }
    /// ```
    static func withScratchTable<Result: Sendable>(
        poolMode: String,
        serverConnections: Int = 2,
        maximumConnections: Int,
        _ body:
            @Sendable (
                _ bouncer: PgBouncer, _ direct: PostgresClient, _ table: PostgresValueTable, _ client: PostgresClient
            ) async throws -> Result
    ) async throws -> Result {
        let bouncer = try await start(poolMode: poolMode, serverConnections: serverConnections)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(
                try await PostgresServer.withClient { direct in
                    let table = try await PostgresServer.scratchTable(direct)
                    let pooled = try bouncer.configuration(maximumConnections: maximumConnections)
                    return try await PostgresServer.withClient(configuration: pooled) { client in
                        try await body(bouncer, direct, table, client)
                    }
                })
        } catch {
            outcome = .failure(error)
        }
        try? await bouncer.stop()
        return try outcome.get()
    }

    /// The configuration of a client that connects through it.
    func configuration(maximumConnections: Int) throws -> PostgresClient.Configuration {
        try PostgresServer.configuration(throughLocalPort: port, maximumConnections: maximumConnections)
    }

    /// Stops it and removes its directory.
    func stop() async throws {
        try await PostgresStandby.shell(
            """
            kill "$(cat '\(directory)/pid')" 2>/dev/null || true
            rm -rf '\(directory)'
            """)
    }
}
#endif
