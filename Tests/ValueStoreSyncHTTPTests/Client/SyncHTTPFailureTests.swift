import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

@testable import ValueStoreSyncHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a failed request becomes: a lost connection, no answer in time, a problem, a 429, a
/// redirect, a URL a token must not go to.
@Suite(.timeLimit(.minutes(1))) struct SyncHTTPFailureTests {
    static let pull = SyncPullRequest(
        account: "user-42", replica: ReplicaID("phone"), epoch: nil, cursor: ServerVersion(0), seen: ServerVersion(0),
        limit: 10, isResync: true)
    static let push = SyncPushRequest(
        account: "user-42", replica: ReplicaID("phone"), epoch: nil, seen: ServerVersion(0), cursor: ServerVersion(0),
        changes: [])

    @Test func aConnectionLostAfterThePushWasReadIsOutcomeUnknownAndAPullsIsUnavailable() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { request, _ in
                _ = try? await request.body(1 << 20)
                return LoopbackHTTPServer.droppedConnection
            }
            defer { server.stop() }
            let remote = sandbox.remote(server.url)
            let pushed = await #expect(throws: ValueStoreError.self) { try await remote.push(Self.push) }
            #expect(pushed?.code == .outcomeUnknown)
            let pulled = await #expect(throws: ValueStoreError.self) { try await remote.pull(Self.pull) }
            #expect(pulled?.code == .unavailable)
        }
    }

    @Test func aPushWithNoAnswerWithinTheRequestTimeoutIsOutcomeUnknownAndAPullUnavailable() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { request, _ in
                _ = try? await request.body(1 << 20)
                try? await Task.sleep(for: .seconds(60))
                return SyncHTTPResponse(status: 500)
            }
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.requestTimeout = .milliseconds(200)
            let remote = sandbox.remote(server.url, options: options)
            let pushed = try await within(.seconds(20), "the push's timeout") {
                await #expect(throws: ValueStoreError.self) { try await remote.push(Self.push) }
            }
            #expect(pushed?.code == .outcomeUnknown)
            let pulled = try await within(.seconds(20), "the pull's timeout") {
                await #expect(throws: ValueStoreError.self) { try await remote.pull(Self.pull) }
            }
            #expect(pulled?.code == .unavailable)
        }
    }

    @Test(arguments: [(403, ValueStoreError.Code.forbidden), (503, .unavailable), (400, .decodingFailed)])
    func aProblemBecomesAnErrorWithItsCode(status: Int, code: ValueStoreError.Code) async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { _, _ in problem(status, code) }
            defer { server.stop() }
            let error = await #expect(throws: ValueStoreError.self) {
                try await sandbox.remote(server.url).pull(Self.pull)
            }
            #expect(error?.code == code)
        }
    }

    @Test func a429IsWaitedOutAndTheRequestSentAgain() async throws {
        try await HTTPSandbox.with { sandbox in
            let requests = SeenRequests()
            let server = try LoopbackHTTPServer { request, token in
                requests.note(request, token: token)
                return requests.all.count <= 2
                    ? problem(429, .unavailable, headers: ["retry-after": "0"]) : await sandbox.respond(to: request)
            }
            defer { server.stop() }
            _ = try await sandbox.remote(server.url).pull(Self.pull)
            #expect(requests.all.count == 3)
        }
    }

    @Test func aLongRetryAfterEndsWhenTheTaskIsCancelled() async throws {
        try await HTTPSandbox.with { sandbox in
            let (arrivals, arrived) = AsyncStream<Void>.makeStream()
            let server = try LoopbackHTTPServer { _, _ in
                arrived.yield()
                return problem(429, .unavailable, headers: ["retry-after": "3600"])
            }
            defer { server.stop() }
            let remote = sandbox.remote(server.url)
            let pulling = Task { try await remote.pull(Self.pull) }
            _ = try await within(.seconds(20), "the first request") { await arrivals.first { _ in true } }
            pulling.cancel()
            let result = try await within(.seconds(20), "the cancelled wait's end") { await pulling.result }
            #expect(throws: CancellationError.self) { try result.get() }
        }
    }

    @Test func aRedirectIsNeverFollowedAndTheTokenNeverReachesTheOtherPort() async throws {
        try await HTTPSandbox.with { sandbox in
            let elsewhere = SeenRequests()
            let other = try LoopbackHTTPServer { request, token in
                elsewhere.note(request, token: token)
                return await sandbox.respond(to: request)
            }
            defer { other.stop() }
            let server = try LoopbackHTTPServer { request, _ in
                SyncHTTPResponse(
                    status: 307, headers: ["location": other.url.appendingPathComponent(request.path).absoluteString])
            }
            defer { server.stop() }
            let remote = sandbox.remote(server.url)
            let pushed = await #expect(throws: ValueStoreError.self) { try await remote.push(Self.push) }
            #expect(pushed?.code == .unavailable)
            #expect(pushed?.reason?.contains("307") == true)
            let pulled = await #expect(throws: ValueStoreError.self) { try await remote.pull(Self.pull) }
            #expect(pulled?.code == .unavailable)
            #expect(elsewhere.all.isEmpty)
        }
    }

    @Test func plainHTTPToAnotherHostIsRefusedBeforeAnythingIsSent() async throws {
        let sent = Mutex(0)
        var options = SyncHTTPOptions()
        options.transport = SyncHTTPTransport(
            send: { request in
                sent.withLock { $0 += 1 }
                throw URLError(.cannotConnectToHost)
            },
            stream: { request in
                sent.withLock { $0 += 1 }
                throw URLError(.cannotConnectToHost)
            })
        let tokens = TokenSource()
        // Names of other machines that start like a loopback address are not one.
        for lookalike in ["http://127.example.com/sync", "http://127.0.0.1.example.com/sync", "http://127.0.0.256/"] {
            let remote = SyncRemote.http(
                try #require(URL(string: lookalike)), account: SyncAccount(id: "user-42"), options: options
            ) {
                try await tokens.token($0)
            }
            let error = await #expect(throws: ValueStoreError.self) { try await remote.push(Self.push) }
            #expect(error?.code == .invalidConfiguration, "\(lookalike)")
        }
        #expect(SyncHTTPClient.isLoopback("127.0.0.1") && SyncHTTPClient.isLoopback("127.1.2.3"))
        #expect(SyncHTTPClient.isLoopback("[::1]") && SyncHTTPClient.isLoopback("LOCALHOST"))
        let url = try #require(URL(string: "http://sync.example.com/sync"))
        let remote = SyncRemote.http(url, account: SyncAccount(id: "user-42"), options: options) {
            try await tokens.token($0)
        }
        let error = await #expect(throws: ValueStoreError.self) { try await remote.push(Self.push) }
        #expect(error?.code == .invalidConfiguration)
        let pokes = try await within(.seconds(20), "the pokes' end") {
            await remote.pokes().reduce(0) { n, _ in n + 1 }
        }
        #expect(pokes == 0)
        #expect(sent.withLock { $0 } == 0)
        #expect(tokens.calls.isEmpty)

        options.allowsInsecureHTTP = true
        let allowed = SyncRemote.http(url, account: SyncAccount(id: "user-42"), options: options) {
            try await tokens.token($0)
        }
        let unreachable = await #expect(throws: ValueStoreError.self) { try await allowed.push(Self.push) }
        #expect(unreachable?.code == .unavailable)
        #expect(sent.withLock { $0 } == 1)
    }
}

/// What answers without a problem document (a proxy's) become.
@Suite(.timeLimit(.minutes(1))) struct SyncHTTPProxyAnswerTests {
    /// A 429 that never stops, with no problem document, ends as `unavailable` (try later), not
    /// as an answer that cannot be read; a 413 to a pull, which is never split, is a
    /// `ValueStoreError` too.
    @Test func aProxysEndless429IsUnavailableAndA413ToAPullIsAValueStoreError() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { request, _ in
                SyncHTTPResponse(
                    status: request.path == "v1/pull" ? 413 : 429, headers: ["retry-after": "0"], body: .bytes(Data()))
            }
            defer { server.stop() }
            let remote = sandbox.remote(server.url)
            let limited = await #expect(throws: ValueStoreError.self) {
                try await remote.push(SyncHTTPFailureTests.push)
            }
            #expect(limited?.code == .unavailable)
            let tooLarge = await #expect(throws: ValueStoreError.self) {
                try await remote.pull(SyncHTTPFailureTests.pull)
            }
            #expect(tooLarge?.code == .invalidConfiguration)
        }
    }
}

/// The URLSession transport: cancellation, and the sessions' end.
@Suite(.timeLimit(.minutes(1))) struct SyncHTTPTransportCancellationTests {
    /// A request of a task cancelled before it was sent is never sent, and ends at once: its
    /// cancellation reached the session's task before the delegate knew it, and the completion of
    /// that cancel could come first and find nothing to end, leaving the caller waiting for ever.
    @Test func aRequestOfACancelledTaskEndsAtOnceUnsent() async throws {
        let seen = SeenRequests()
        let server = try LoopbackHTTPServer { request, token in
            seen.note(request, token: token)
            return SyncHTTPResponse(status: 204)
        }
        defer { server.stop() }
        let transport = SyncHTTPTransport.urlSession()
        var request = URLRequest(url: server.url.appendingPathComponent("v1/pull"))
        request.httpMethod = "POST"
        for _ in 0..<50 {
            let sent = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await transport.send(request)
            }
            let outcome = try await within(.seconds(10), "a cancelled request's end") { await sent.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
        #expect(seen.all.isEmpty)
    }

    /// A transport's sessions are invalidated once the last copy of the transport is released,
    /// and let their delegates go: on Apple platforms a session holds itself and its delegate
    /// until then, so each `SyncHTTPOptions()` made would keep two for the life of the process.
    @Test func aReleasedTransportInvalidatesItsSessions() async throws {
        let server = try LoopbackHTTPServer { _, _ in SyncHTTPResponse(status: 204) }
        defer { server.stop() }
        var sessions: [URLSession] = []
        do {
            let owned = URLSessions(.ephemeral)
            sessions = owned.all
            let transport = SyncHTTPTransport.urlSession(over: owned)
            let (_, head) = try await transport.send(URLRequest(url: server.url.appendingPathComponent("v1/pull")))
            #expect(head.statusCode == 204)
            #expect(sessions.allSatisfy { $0.delegate != nil })
        }
        // Invalidation ends on the sessions' own queues: wait for it, 10 s at most.
        let deadline = ContinuousClock.now + .seconds(10)
        while sessions.contains(where: { $0.delegate != nil }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(sessions.allSatisfy { $0.delegate == nil })
    }
}
