import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreTestSupport

/// The bearer token: asked once at first, renewed once, single-flight, when the server refuses it.
@Suite(.timeLimit(.minutes(1))) struct SyncHTTPTokenTests {
    @Test func concurrentRequestsThatSeeATokenRefusedRenewItWithOneCall() async throws {
        try await HTTPSandbox.with { sandbox in
            // The server takes t2 only: every request's first try with t1 is refused.
            let server = try LoopbackHTTPServer { request, token in
                token == "t2" ? await sandbox.respond(to: request) : problem(401, .unauthorized)
            }
            defer { server.stop() }
            let remote = sandbox.remote(server.url)
            let request = SyncPullRequest(
                account: sandbox.account.id, replica: ReplicaID("phone"), epoch: nil, cursor: ServerVersion(0),
                seen: ServerVersion(0), limit: 10, isResync: true)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { _ = try await remote.pull(request) }
                }
                try await group.waitForAll()
            }
            #expect(sandbox.tokens.calls == [nil, "t1"])
        }
    }

    @Test func aSecondRefusalThrowsUnauthorizedAndTheReplicaKeepsItsChangesPending() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { _, _ in problem(401, .unauthorized) }
            defer { server.stop() }
            let replica = try sandbox.replica("phone", remote: sandbox.remote(server.url))
            try await replica.store("theme", as: String.self).save("dark")
            let error = await #expect(throws: ValueStoreError.self) { try await replica.syncNow() }
            #expect(error?.code == .unauthorized)
            #expect(replica.status.pendingChanges == 1)
            #expect(replica.status.rejectedChanges.isEmpty)
            #expect(sandbox.tokens.calls == [nil, "t1"])
        }
    }

    /// A token source that never answers (a refresh with no timeout, a sign-in screen) fails a
    /// request after the request timeout, unsent, and the next request asks the source again;
    /// a caller cancelled while it waits returns at once.
    @Test func aTokenSourceThatNeverAnswersFailsTheRequestInTimeAndACancelledCallerReturns() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { request, _ in await sandbox.respond(to: request) }
            defer { server.stop() }
            let calls = Mutex(0)
            var options = HTTPSandbox.options()
            options.requestTimeout = .milliseconds(200)
            let remote = SyncRemote.http(server.url, account: sandbox.account, options: options) { _ in
                calls.withLock { $0 += 1 }
                return await Self.never()
            }
            let request = SyncPullRequest(
                account: sandbox.account.id, replica: ReplicaID("phone"), epoch: nil, cursor: ServerVersion(0),
                seen: ServerVersion(0), limit: 10, isResync: true)
            let late = try await within(.seconds(20), "the request's timeout") {
                await #expect(throws: ValueStoreError.self) { try await remote.pull(request) }
            }
            #expect(late?.code == .unavailable)
            _ = try await within(.seconds(20), "the second request's timeout") { try? await remote.pull(request) }
            #expect(calls.withLock { $0 } == 2)

            options.requestTimeout = .seconds(600)
            let patient = SyncRemote.http(server.url, account: sandbox.account, options: options) { _ in
                await Self.never()
            }
            let waiting = Task { try await patient.pull(request) }
            try await Task.sleep(for: .milliseconds(50))
            waiting.cancel()
            let outcome = try await within(.seconds(20), "the cancelled caller's return") { await waiting.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }

    /// Two requests that wait for one late call both fail as `unavailable`: the first gives the
    /// call up and cancels it, and the second sees the call's cancellation as lateness too,
    /// never as a cancellation of its own.
    @Test func requestsThatShareALateTokenCallAllFailAsUnavailable() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { request, _ in await sandbox.respond(to: request) }
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.requestTimeout = .milliseconds(300)
            let remote = SyncRemote.http(server.url, account: sandbox.account, options: options) { _ in
                try await Task.sleep(for: .seconds(60))  // a refresh that ends when cancelled
                return "late"
            }
            let request = SyncPullRequest(
                account: sandbox.account.id, replica: ReplicaID("phone"), epoch: nil, cursor: ServerVersion(0),
                seen: ServerVersion(0), limit: 10, isResync: true)
            let first = Task { try await remote.pull(request) }
            try await Task.sleep(for: .milliseconds(100))
            let second = Task { try await remote.pull(request) }
            for (name, task) in [("first", first), ("second", second)] {
                let outcome = try await within(.seconds(20), "the \(name) request's end") { await task.result }
                let error = #expect(throws: ValueStoreError.self, "\(name)") { try outcome.get() }
                #expect(error?.code == .unavailable, "\(name)")
            }
        }
    }

    /// Never returns, and ignores cancellation: a call stuck for good.
    static func never() async -> String {
        await withUnsafeContinuation { (_: UnsafeContinuation<String, Never>) in }
    }
}
