import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreTestSupport

// The code shown in Documentation/SyncOverHTTPClient.md, compiled and run here.
@Suite(.timeLimit(.minutes(1))) struct SyncOverHTTPClientExamplesTests {
    /// An app's sign-in, as the guide calls it.
    struct Auth: Sendable {
        func token(refreshing rejected: String?) async throws -> String { "session-token" }
    }

    @Test func theUsageSyncsThroughTheRemote() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { request, token in
                token == "session-token" ? await sandbox.respond(to: request) : problem(401, .unauthorized)
            }
            defer { server.stop() }
            let (url, account, auth) = (server.url, sandbox.account, Auth())
            let syncFolder = sandbox.root.appending(path: "phone", directoryHint: .isDirectory)

            var options = SyncHTTPOptions()
            options.pokes = .serverSentEvents
            options.maximumRequestBytes = 256 << 10  // a proxy in front that takes 256 KiB at most
            let remote = SyncRemote.http(url, account: account, options: options) { rejected in
                try await auth.token(refreshing: rejected)
            }
            let replica = try SyncReplica(directory: syncFolder, account: account, remote: remote)
            let syncing = Task { try await replica.run() }
            defer { syncing.cancel() }

            try await replica.store("theme", as: String.self).save("dark")
            try await within(.seconds(30), "the push") { try await replica.waitUntilPushed() }
            #expect(sandbox.server.state(of: account)?.records["theme"] != nil)
        }
    }
}
