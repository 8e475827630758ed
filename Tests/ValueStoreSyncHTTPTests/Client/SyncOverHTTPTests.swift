import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreTestSupport

/// Two devices over HTTP to one server behind the service: a save on one reaches the other
/// through a poke, a token that expires mid-run is renewed once, and nothing is lost.
@Suite(.timeLimit(.minutes(2))) struct SyncOverHTTPTests {
    @Test func aSaveReachesAnotherDeviceThroughAPokeAndAnExpiredTokenIsRenewedOnce() async throws {
        try await HTTPSandbox.with { sandbox in
            let accepted = Mutex<Set<String>>(["t1"])
            let server = try LoopbackHTTPServer { request, token in
                guard let token, accepted.withLock({ $0.contains(token) }) else {
                    return problem(401, .unauthorized)
                }
                return await sandbox.respond(to: request)
            }
            defer { server.stop() }
            let (phoneTokens, laptopTokens) = (TokenSource(), TokenSource())
            let phone = try sandbox.replica(
                "phone",
                remote: .http(server.url, account: sandbox.account, options: HTTPSandbox.options()) {
                    try await phoneTokens.token($0)
                })
            let laptop = try sandbox.replica(
                "laptop",
                remote: .http(server.url, account: sandbox.account, options: HTTPSandbox.options()) {
                    try await laptopTokens.token($0)
                })
            let syncing = [Task { try await phone.run() }, Task { try await laptop.run() }]
            defer {
                for task in syncing { task.cancel() }
            }

            let dark = laptop.store("theme", as: String.self).changes()
            try await phone.store("theme", as: String.self).save("dark")
            #expect(try await delivered("dark", to: dark, "the laptop showing the phone's save"))

            // Every token given so far expires: each device's next request is refused, and
            // renewed once.
            accepted.withLock { $0 = ["t2"] }
            let light = laptop.store("theme", as: String.self).changes()
            try await phone.store("theme", as: String.self).save("light")
            #expect(try await delivered("light", to: light, "the laptop showing the save after the expiry"))
            try await within(.seconds(30), "the phone's push") { try await phone.waitUntilPushed() }

            #expect(phoneTokens.calls == [nil, "t1"])
            #expect(laptopTokens.calls == [nil, "t1"])
            #expect(phone.status.pendingChanges == 0)
            #expect(phone.status.rejectedChanges.isEmpty)
            #expect(laptop.status.pendingChanges == 0)
            #expect(try await laptop.store("theme", as: String.self).load() == "light")
            #expect(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record.stamp != nil)
        }
    }
}
