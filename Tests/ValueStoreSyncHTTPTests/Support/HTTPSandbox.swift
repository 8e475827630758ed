import Foundation
import Synchronization
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

@testable import ValueStoreSyncHTTP

/// A temporary folder for a test's devices, the in-memory server they share, and the service
/// in front of it; the folder is removed when the test is done.
///
/// ```swift
/// try await HTTPSandbox.with { sandbox in
///     let server = try LoopbackHTTPServer { request, _ in await sandbox.respond(to: request) }
///     let phone = try sandbox.replica("phone", remote: sandbox.remote(server.url))
/// }
/// ```
struct HTTPSandbox: Sendable {
    let root: URL
    let server = InMemorySyncServer()
    let account = SyncAccount(id: "user-42")
    let tokens = TokenSource()

    static func with<Result>(_ body: (_ sandbox: HTTPSandbox) async throws -> Result) async throws -> Result {
        let root = FileManager.default.temporaryDirectory
            .appending(path: "ValueStoreSyncHTTPTests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        return try await body(HTTPSandbox(root: root))
    }

    /// The service in front of the sandbox's server.
    var service: SyncHTTPService {
        SyncHTTPService(remote: server.remote(for:))
    }

    /// The service's answer for the sandbox's account.
    func respond(to request: SyncHTTPRequest) async -> SyncHTTPResponse {
        await service.respond(to: request, account: account)
    }

    /// Options with short waits, so a test that waits for a reconnect does not wait long.
    static func options() -> SyncHTTPOptions {
        var options = SyncHTTPOptions()
        options.requestTimeout = .seconds(20)
        options.timings.reconnectDelay = .milliseconds(10)
        options.timings.maximumReconnectDelay = .milliseconds(100)
        options.timings.readyTimeout = .seconds(20)
        options.timings.silenceLimit = .seconds(60)
        return options
    }

    /// An HTTP remote of the sandbox's account at `url`, with the sandbox's tokens.
    func remote(_ url: URL, options: SyncHTTPOptions = options()) -> SyncRemote {
        SyncRemote.http(url, account: account, options: options) { rejected in try await tokens.token(rejected) }
    }

    /// A replica of the sandbox's account on `device`, talking to `remote`.
    func replica(_ device: String, remote: SyncRemote) throws -> SyncReplica {
        var options = SyncOptions()
        options.fileOptions = .cache
        return try SyncReplica(
            directory: root.appending(path: device, directoryHint: .isDirectory), account: account, remote: remote,
            options: options)
    }
}

/// A token source that answers `t1` first, then `t2` for `t1`, `t3` for `t2`, and so on, and
/// notes every call's refused token.
final class TokenSource: Sendable {
    private let state = Mutex<[String?]>([])

    /// The refused token of every call, in order (`nil`: a first token).
    var calls: [String?] { state.withLock { $0 } }

    func token(_ rejected: String?) async throws -> String {
        state.withLock { $0.append(rejected) }
        let number = rejected.flatMap { Int($0.dropFirst()) } ?? 0
        return "t\(number + 1)"
    }
}

/// What a scripted handler saw: the requests' routes, tokens and bodies, in order.
final class SeenRequests: Sendable {
    struct Seen: Sendable {
        var method: String
        var path: String
        var query: [String: String]
        var token: String?
        var body: Data
    }

    private let state = Mutex<[Seen]>([])

    var all: [Seen] { state.withLock { $0 } }

    func note(_ request: SyncHTTPRequest, token: String?, body: Data = Data()) {
        state.withLock {
            $0.append(Seen(method: request.method, path: request.path, query: request.query, token: token, body: body))
        }
    }

    /// Reads `request`'s body, notes the request with it, and returns the request for the
    /// service to read the body again.
    func noting(_ request: SyncHTTPRequest, token: String?) async -> SyncHTTPRequest {
        let body = (try? await request.body(1 << 20)) ?? Data()
        note(request, token: token, body: body)
        return replaying(request, body: body)
    }
}

/// A request whose body the handler already read, for the service to read again.
func replaying(_ request: SyncHTTPRequest, body: Data) -> SyncHTTPRequest {
    var request = request
    request.body = { _ in body }
    return request
}

/// A problem answer, as the service writes one.
func problem(_ status: Int, _ code: ValueStoreError.Code, headers: [String: String] = [:]) -> SyncHTTPResponse {
    var response = SyncHTTPProblem(status: status, code: code, detail: "scripted").response
    response.headers.merge(headers) { $1 }
    return response
}
