// valuestore-sync-server as a process: its settings, its tokens, /health, its shutdown. With the
// PostgreSQL, Configuration and Hummingbird traits; the database test under pg_virtualenv.
#if PostgreSQL && Configuration && Hummingbird
import Foundation
import Testing
import ValueStoreSync
import ValueStoreTestSupport

@Suite(.timeLimit(.minutes(3))) struct SyncServerProcessTests {
    /// A pull of `account`'s records from the start, as a device's first.
    func pull(_ account: String) throws -> Data {
        try JSONEncoder().encode(
            SyncPullRequest(
                account: account, replica: ReplicaID("device-1"), epoch: nil, cursor: .zero, seen: .zero, limit: 10,
                isResync: false))
    }

    @Test func withNoDatabaseItSaysInOneLineThatNothingIsDurableAndServesFromMemory() async throws {
        let server = try ServerProcess(environment: ServerProcess.environment())
        let (lines, port) = try await server.started()
        #expect(lines.count == 2)
        #expect(lines.first?.contains("nothing is durable") == true)
        let health = try await ServerProcess.request("GET", "/health", port: port)
        #expect(health.status == 200)
        let token = try await ServerProcess.token(account: "user-42")
        let pulled = try await ServerProcess.request(
            "POST", "/sync/v1/pull", port: port, token: token, body: pull("user-42"))
        #expect(pulled.status == 200)
        #expect(try await server.terminate() == 0)
    }

    /// A device idle with its poke stream open to the server uses next to no CPU. On Linux,
    /// URLSession spun about 85% of a core for as long as a request that opened its own
    /// connection waited for its answer, which for a poke stream is its whole life (2.99 s of
    /// CPU in these 3 s, measured); its transport now opens each stream on a connection that
    /// already served a request. Linux only: it reads the CPU time in `/proc`.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat")))
    func aDeviceIdleWithItsPokeStreamOpenUsesNextToNoCPU() async throws {
        let server = try ServerProcess(environment: ServerProcess.environment())
        let port = try await server.started().port
        let token = try await ServerProcess.token(account: "user-42")
        let device = try HelperProcess("sync-pokes", "http://127.0.0.1:\(port)/sync", "user-42", token)
        defer { device.kill() }
        let ready = try await within(.seconds(30), "the stream's ready") { await device.nextLine() }
        #expect(ready == "poked")
        let before = try Self.cpuSeconds(of: device.process.processIdentifier)
        try await Task.sleep(for: .seconds(3))
        let used = try Self.cpuSeconds(of: device.process.processIdentifier) - before
        #expect(used < 0.5, "the idle device used \(used) s of CPU in 3 s")
        #expect(try await server.terminate() == 0)
    }

    /// The CPU time, user and system, that process `pid` has used so far (Linux's `/proc`).
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command's closing parenthesis: the state (field 3), then utime and stime
        // (fields 14 and 15), in clock ticks.
        let fields = try #require(stat.split(separator: ")").last).split(separator: " ")
        let ticks = try #require(Double(fields[11])) + #require(Double(fields[12]))
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test func aTokenThatIsMissingExpiredBadlySignedOrForAnotherAudienceIsUnauthorized() async throws {
        let server = try ServerProcess(
            environment: ServerProcess.environment(extra: ["VALUESTORE_SYNC_JWT_AUDIENCE": "valuestore"]))
        let port = try await server.started().port
        let good = try await ServerProcess.token(account: "user-42", audience: "valuestore")
        let refused = [
            "missing": nil,
            "expired": try await ServerProcess.token(account: "user-42", expiresIn: -60, audience: "valuestore"),
            "badly signed": try await ServerProcess.token(
                account: "user-42", audience: "valuestore", secret: "another-secret-that-is-32-bytes-long"),
            "for another audience": try await ServerProcess.token(account: "user-42", audience: "another-app"),
            "without an audience": try await ServerProcess.token(account: "user-42"),
            "not a token": "not-a-jwt",
        ]
        for (name, token) in refused {
            let answer = try await ServerProcess.request(
                "POST", "/sync/v1/pull", port: port, token: token, body: pull("user-42"))
            #expect(answer.status == 401, "\(name)")
        }
        let answer = try await ServerProcess.request(
            "POST", "/sync/v1/pull", port: port, token: good, body: pull("user-42"))
        #expect(answer.status == 200)
        // The token's `sub` is the account: a pull naming another is forbidden.
        let other = try await ServerProcess.request(
            "POST", "/sync/v1/pull", port: port, token: good, body: pull("user-7"))
        #expect(other.status == 403)
        #expect(try await server.terminate() == 0)
    }

    @Test(arguments: [
        ([:], "VALUESTORE_SYNC_JWT_HS256_SECRET"),
        (["VALUESTORE_SYNC_JWT_HS256_SECRET": "short"], "at least 32"),
        (["VALUESTORE_SYNC_JWKS_FILE": "/nonexistent/jwks.json"], "VALUESTORE_SYNC_JWKS_FILE"),
        (["VALUESTORE_SYNC_PORT": "eighty"], "VALUESTORE_SYNC_PORT"),
        (["PGPORT": "eighty"], "PGPORT=eighty is not a port number"),
        (["PGSSLMODE": "require", "PGHOST": "localhost"], "PGSSLMODE=require is not supported"),
        (["VALUESTORE_SYNC_REQUESTS_PER_MINUTE": "many"], "VALUESTORE_SYNC_REQUESTS_PER_MINUTE"),
    ])
    func itRefusesToStartWithoutAWayToVerifyTokensOrWithABadSetting(
        settings: [String: String], named: String
    ) async throws {
        var environment = ServerProcess.environment()
        environment["VALUESTORE_SYNC_JWT_HS256_SECRET"] = nil
        // A setting other than the tokens' is refused with a way to verify tokens set.
        if settings.keys.contains(where: { !$0.hasPrefix("VALUESTORE_SYNC_JW") }) {
            environment["VALUESTORE_SYNC_JWT_HS256_SECRET"] = ServerProcess.secret
        }
        let server = try ServerProcess(environment: environment.merging(settings) { $1 })
        #expect(try await server.exitStatus() == 64)
        #expect(server.standardError().contains(named))
    }

    @Test func itLimitsEachAccountsRequestsAsConfigured() async throws {
        let server = try ServerProcess(
            environment: ServerProcess.environment(extra: ["VALUESTORE_SYNC_REQUESTS_PER_MINUTE": "1"]))
        let port = try await server.started().port
        let token = try await ServerProcess.token(account: "user-42")
        let first = try await ServerProcess.request(
            "POST", "/sync/v1/pull", port: port, token: token, body: pull("user-42"))
        #expect(first.status == 200)
        let second = try await ServerProcess.request(
            "POST", "/sync/v1/pull", port: port, token: token, body: pull("user-42"))
        #expect(second.status == 429, "one request a minute: the second waits")
        #expect(try await server.terminate() == 0)
    }

    @Test func overADatabaseItServesAndHealthAnswers() async throws {
        try #require(
            ProcessInfo.processInfo.environment["PGHOST"] != nil,
            "needs a server: pg_virtualenv swift test --traits PostgreSQL,Configuration,Hummingbird")
        let table = "server_test_\(UInt32.random(in: 0..<UInt32.max))"
        let server = try ServerProcess(
            environment: ServerProcess.environment(database: true, extra: ["VALUESTORE_SYNC_TABLE": table]))
        let (lines, port) = try await server.started()
        #expect(!lines.contains { $0.contains("nothing is durable") })
        #expect(try await ServerProcess.request("GET", "/health", port: port).status == 200)
        let token = try await ServerProcess.token(account: "user-42")
        let pulled = try await ServerProcess.request(
            "POST", "/sync/v1/pull", port: port, token: token, body: pull("user-42"))
        #expect(pulled.status == 200)
        #expect(try await server.terminate() == 0)
    }

    /// SIGTERM while a device holds a poke stream, another waits in a long poll, and a third's
    /// pull stopped halfway through its body (its network went silent): the stream ends, the long
    /// poll is answered 503, the silent connection is closed after the server's idle timeout, and
    /// the server exits 0. It waited for the silent request's body forever before.
    @Test func sigtermEndsPokeStreamsAndASilentRequestAndExitsCleanly() async throws {
        let server = try ServerProcess(environment: ServerProcess.environment())
        let port = try await server.started().port
        let token = try await ServerProcess.token(account: "user-42")
        let head = "Host: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
        // Sent first: by the time the stream says ready, the server read the other two heads.
        let body = String(decoding: try pull("user-42"), as: UTF8.self)
        let silent = try LoopbackClientSocket(port: port)
        try silent.send(
            "POST /sync/v1/pull HTTP/1.1\r\n\(head)Content-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body.prefix(10))")
        let longPoll = try LoopbackClientSocket(port: port)
        try longPoll.send("GET /sync/v1/pokes?wait=60 HTTP/1.1\r\n\(head)\r\n")
        let stream = try LoopbackClientSocket(port: port)
        try stream.send("GET /sync/v1/pokes HTTP/1.1\r\n\(head)Accept: text/event-stream\r\n\r\n")
        let opened = await stream.received(until: "ready", within: .seconds(30))
        try #require(opened.contains("event: ready"), "the stream opened: \(opened)")

        #expect(try await server.terminate(within: .seconds(60)) == 0)
        let ended = await stream.received(within: .seconds(10))
        #expect(ended.hasSuffix("0\r\n\r\n"), "the stream ended with its last chunk: \(ended)")
        let answered = await longPoll.received(within: .seconds(10))
        #expect(answered.hasPrefix("HTTP/1.1 503"), "the long poll was answered: \(answered)")
    }

    @Test func aServerWhoseDatabaseDoesNotAnswerRefusesToStartAndSaysWhy() async throws {
        // A port nothing listens on: the tables cannot be made, so the server does not start.
        var environment = ServerProcess.environment()
        environment["PGHOST"] = "127.0.0.1"
        environment["PGPORT"] = "1"
        let server = try ServerProcess(environment: environment)
        #expect(try await server.exitStatus(within: .seconds(90)) == 1)
        #expect(!server.standardError().isEmpty)
    }
}
#endif
