#if PostgreSQL && Configuration && Hummingbird
package import Foundation
import Synchronization

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `valuestore-sync-server` process of the tests' own, its output line by line, and requests
/// to it. Every wait is bounded and fails by name. The server process tests and the PostgreSQL
/// chaos test's HTTP mode start their servers through it.
///
/// ```swift
/// let server = try ServerProcess(environment: ServerProcess.environment(database: true))
/// let port = try await server.started().port
/// let token = try await ServerProcess.token(account: "user-42")
/// ```
package final class ServerProcess: Sendable {
    /// A wait that did not end in time.
    package struct Timeout: Error, CustomStringConvertible {
        package var description: String
    }

    /// The HS256 secret the tests' servers verify with (32 bytes or more).
    package static let secret = "a-secret-of-the-tests-32-bytes-long"

    private let process: Process
    private let output: AsyncStream<String>
    /// Where the server's standard error goes: a file, which never fills as a pipe would.
    private let errors = FileManager.default.temporaryDirectory.appending(path: "sync-server-\(UUID().uuidString).log")

    /// Starts the server with exactly `environment` (plus `PATH`), its output read line by line.
    package init(environment: [String: String]) throws {
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
    package static func environment(database: Bool = false, extra: [String: String] = [:]) -> [String: String] {
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
    package func started(within limit: Duration = .seconds(60)) async throws -> (lines: [String], port: Int) {
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

    /// Kills the server (`kill -9`): requests in flight get no answer, streams end with no
    /// goodbye. Wait for it with ``exitStatus(within:)``.
    package func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Sends SIGTERM and returns the exit status, waiting at most `limit` (then SIGKILL, and a
    /// failure naming the wait).
    package func terminate(within limit: Duration = .seconds(20)) async throws -> Int32 {
        Foundation.kill(process.processIdentifier, SIGTERM)
        return try await exitStatus(within: limit)
    }

    /// The exit status, waiting at most `limit`.
    package func exitStatus(within limit: Duration = .seconds(20)) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                Foundation.kill(process.processIdentifier, SIGKILL)
                throw Timeout(description: "the server did not exit within \(limit)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    /// What the server wrote to standard error; call after it exited.
    package func standardError() -> String {
        (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    }

    deinit {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
        }
        try? FileManager.default.removeItem(at: errors)
    }

    /// A token the tests' servers accept for `account` (a JWT signed with HS256), or one
    /// spoiled as the test asks.
    package static func token(
        account: String, expiresIn: TimeInterval = 300, audience: String? = nil, secret: String = secret
    ) async throws -> String {
        struct Claims: Encodable {
            var sub: String
            var exp: Int
            var aud: String?
        }
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let claims = Claims(
            sub: account, exp: Int(Date().addingTimeInterval(expiresIn).timeIntervalSince1970), aud: audience)
        let signed =
            base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + base64URL(try JSONEncoder().encode(claims))
        let signature = HMAC<SHA256>.authenticationCode(
            for: Data(signed.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return signed + "." + base64URL(Data(signature))
    }

    /// The status and body of a request to the server on `port`.
    package static func request(
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
package func bounded<Result: Sendable>(
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
