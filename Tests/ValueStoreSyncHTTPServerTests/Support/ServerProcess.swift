#if PostgreSQL && Configuration && Hummingbird
import Foundation
import JWTKit
import Synchronization
import ValueStoreTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `valuestore-sync-server` process of the tests' own, its output line by line, and requests
/// to it. Every wait is bounded and fails by name.
final class ServerProcess: Sendable {
    /// A wait that did not end in time.
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    /// The HS256 secret the tests' servers verify with (32 bytes or more).
    static let secret = "a-secret-of-the-tests-32-bytes-long"

    private let process: Process
    private let output: AsyncStream<String>
    /// Where the server's standard error goes: a file, which never fills as a pipe would.
    private let errors = FileManager.default.temporaryDirectory.appending(path: "sync-server-\(UUID().uuidString).log")

    /// Starts the server with exactly `environment` (plus `PATH`), its output read line by line.
    init(environment: [String: String]) throws {
        process = Process()
        process.executableURL = try HelperProcess.executable(named: "valuestore-sync-server")
        process.environment = environment.merging(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]) { a, _ in
            a
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errors.path])
        }
        process.standardError = try FileHandle(forWritingTo: errors)
        let (lines, send) = AsyncStream.makeStream(of: String.self)
        output = lines
        let pending = Mutex(Data())
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                send.finish()
                return
            }
            pending.withLock { buffer in
                buffer.append(data)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    send.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
        }
        try process.run()
    }

    /// The environment of a server on a free port that verifies the tests' tokens, with no
    /// database unless `database` (then the `PG*` variables of this process, pg_virtualenv's).
    static func environment(database: Bool = false, extra: [String: String] = [:]) -> [String: String] {
        var environment = ["VALUESTORE_SYNC_HOST": "127.0.0.1", "VALUESTORE_SYNC_PORT": "0"]
        environment["VALUESTORE_SYNC_JWT_HS256_SECRET"] = secret
        if database {
            for (name, value) in ProcessInfo.processInfo.environment where name.hasPrefix("PG") {
                environment[name] = value
            }
        }
        return environment.merging(extra) { $1 }
    }

    /// The lines the server prints up to its "listening on" line, and the port it names.
    func started(within limit: Duration = .seconds(60)) async throws -> (lines: [String], port: Int) {
        try await bounded(limit, "the server to say it listens") {
            var lines: [String] = []
            for await line in self.output {
                lines.append(line)
                if line.contains("listening on http://"),
                    let port = line.split(separator: ":").last.flatMap({ Int($0) })
                {
                    return (lines, port)
                }
            }
            throw Timeout(description: "the server exited before it listened: \(self.standardError())")
        }
    }

    /// Sends SIGTERM and returns the exit status, waiting at most `limit` (then SIGKILL, and a
    /// failure naming the wait).
    func terminate(within limit: Duration = .seconds(20)) async throws -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        return try await exitStatus(within: limit)
    }

    /// The exit status, waiting at most `limit`.
    func exitStatus(within limit: Duration = .seconds(20)) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw Timeout(description: "the server did not exit within \(limit)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    /// What the server wrote to standard error; call after it exited.
    func standardError() -> String {
        (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        try? FileManager.default.removeItem(at: errors)
    }

    /// A token the tests' servers accept for `account`, or one spoiled as the test asks.
    static func token(
        account: String, expiresIn: TimeInterval = 300, audience: String? = nil, secret: String = secret
    ) async throws -> String {
        struct Claims: JWTPayload {
            var sub: SubjectClaim
            var exp: ExpirationClaim
            var aud: AudienceClaim?
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(
            Claims(
                sub: SubjectClaim(value: account), exp: ExpirationClaim(value: Date().addingTimeInterval(expiresIn)),
                aud: audience.map { AudienceClaim(value: $0) }))
    }

    /// The status and body of a request to the server on `port`.
    static func request(
        _ method: String, _ path: String, port: Int, token: String? = nil, body: Data? = nil
    ) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!, timeoutInterval: 20)
        request.httpMethod = method
        request.httpBody = body
        if body != nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

/// Runs `body`, failing with `Timeout` naming `what` when it takes longer than `limit`.
func bounded<Result: Sendable>(
    _ limit: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw ServerProcess.Timeout(description: "waited \(limit) for \(what)")
        }
        return result
    }
}
#endif
