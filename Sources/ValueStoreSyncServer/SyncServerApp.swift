// The server itself: the sync routes at /sync, /health, and the services that run them.
#if PostgreSQL && Configuration && Hummingbird
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import UnixSignals
import ValueStore
import ValueStorePostgres
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreSyncHTTPServer

/// valuestore-sync-server: the routes of a ``SyncHTTPService`` mounted at `/sync`, authenticated
/// by JWT, over a `PostgresSyncTable` (or, with no database configured, an `InMemorySyncServer`),
/// and `GET /health`.
///
/// SIGTERM and SIGINT shut it down gracefully: poke streams end, requests in flight finish, then
/// the database client closes. A connection that sends nothing for ``idleTimeout`` while its
/// request is read, or between requests, is closed, so a client that went silent halfway through
/// a request (a partition, a crashed device) holds neither a connection nor the shutdown.
struct SyncServerApp {
    let configuration: SyncServerConfiguration
    let logger = Logger(label: "valuestore-sync-server")

    /// How long a connection may send nothing while its request is read, or between requests,
    /// before it is closed. Poke streams and long polls are not idle: their requests were read.
    static let idleTimeout = TimeAmount.seconds(10)

    /// Runs the server until a signal ends it.
    func run() async throws {
        let tokens = try await SyncTokens(configuration)
        let authentication = SyncAuthentication<BasicRequestContext>.bearer { token in
            await tokens.account(for: token)
        }
        guard let database = configuration.database else {
            say(
                "valuestore-sync-server: no database configured (no PG* variable is set): serving from memory, "
                    + "nothing is durable")
            let server = InMemorySyncServer()
            let service = SyncHTTPService(limits: limits, remote: server.remote(for:))
            let app = application(service: service, authentication: authentication, health: {})
            try await serve(app, service: service)
            return
        }
        let client = PostgresClient(configuration: database, backgroundLogger: logger)
        let table = try PostgresSyncTable(client: client, name: configuration.table)
        let service = SyncHTTPService(limits: limits, remote: table.remote(for:))
        var app = application(service: service, authentication: authentication) {
            try await client.query("SELECT 1")
        }
        app.addServices(client)
        // The tables exist before the first request, with the client running.
        app.beforeServerStarts { try await table.createIfNeeded() }
        try await serve(app, service: service)
    }

    /// The service's limits: the defaults, with the configured rate.
    private var limits: SyncHTTPLimits {
        var limits = SyncHTTPLimits()
        limits.requestsPerMinutePerAccount = configuration.requestsPerMinute
        return limits
    }

    /// The app: the routes at `/sync`, `/health` answering 200 when `health` returns within two
    /// seconds and 503 otherwise, and a line naming the address once it listens.
    private func application(
        service: SyncHTTPService,
        authentication: SyncAuthentication<BasicRequestContext>,
        health: @escaping @Sendable () async throws -> Void
    ) -> Application<RouterResponder<BasicRequestContext>> {
        let router = Router()
        router.addRoutes(service.routes(authentication: authentication), atPath: "/sync")
        router.get("/health") { _, _ -> Response in
            let healthy = await Self.answers(within: .seconds(2), health)
            return Response(
                status: healthy ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: healthy ? "ok\n" : "the database does not answer\n")))
        }
        return Application(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(idleTimeout: Self.idleTimeout)),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                say("valuestore-sync-server: listening on http://\(configuration.host):\(port)")
            },
            logger: logger
        )
    }

    /// Runs `app` until SIGTERM or SIGINT, ending `service`'s poke streams first when one comes.
    private func serve(_ app: some ApplicationProtocol, service: SyncHTTPService) async throws {
        // The group shuts its services down last first: the poke streams end before the server
        // waits for the requests in flight, of which an open stream would be one.
        let group = ServiceGroup(
            configuration: .init(
                services: [app, PokeStreamsEnding(service: service)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }

    /// Whether `check` returns within `limit`. It is not awaited past it: a query on a pooled
    /// connection whose server stopped answering ignores cancellation until TCP gives up.
    private static func answers(
        within limit: Duration,
        _ check: @escaping @Sendable () async throws -> Void
    ) async -> Bool {
        let checking = Task { try await check() }
        defer { checking.cancel() }
        return (try? await checking.value(within: limit) { CancellationError() }) != nil
    }
}

/// Ends the service's poke streams when a graceful shutdown begins, so the server's wait for its
/// requests in flight does not wait for them.
struct PokeStreamsEnding: Service {
    let service: SyncHTTPService

    func run() async throws {
        // Waits for the shutdown (or the group's cancellation, which ends the streams anyway).
        try? await gracefulShutdown()
        service.endPokeStreams()
    }
}

/// Prints `line` to standard output at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
#endif
