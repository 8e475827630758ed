// Two valuestore-sync-server processes on one database: what one is told reaches devices
// connected to the other. With the PostgreSQL, Configuration and Hummingbird traits, under
// pg_virtualenv.
#if PostgreSQL && Configuration && Hummingbird
import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreTestSupport

@Suite(.timeLimit(.minutes(3))) struct SyncServerInstancesTests {
    let account = SyncAccount(id: "user-42")

    /// A remote of `account` to the server on `port`, its pokes by server-sent events.
    func remote(_ port: Int, token: String) -> SyncRemote {
        var options = SyncHTTPOptions()
        options.pokes = .serverSentEvents
        return SyncRemote.http(URL(string: "http://127.0.0.1:\(port)/sync")!, account: account, options: options) {
            _ in token
        }
    }

    @Test func aChangePushedThroughOneServerPokesAndReachesADeviceOfTheOther() async throws {
        try #require(
            ProcessInfo.processInfo.environment["PGHOST"] != nil,
            "needs a server: pg_virtualenv swift test --traits PostgreSQL,Configuration,Hummingbird")
        let folder = FileManager.default.temporaryDirectory.appending(
            path: "SyncServerInstances-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ServerProcess.environment(
            database: true, extra: ["VALUESTORE_SYNC_TABLE": "instances_\(UInt32.random(in: 0..<UInt32.max))"])
        let first = try ServerProcess(environment: environment)
        let second = try ServerProcess(environment: environment)
        let (portA, portB) = (try await first.started().port, try await second.started().port)
        let token = try await ServerProcess.token(account: account.id)

        // A device listening to server A: its stream's `ready` is the first poke. The second
        // comes once server A listens to the database (its listener signals every key when it
        // starts following, since it may have missed a notification): a push before it would
        // race the LISTEN, and that poke is no proof of one.
        let pokes = Mutex(0)
        let stream = remote(portA, token: token).pokes()
        let listening = Task {
            for await _ in stream {
                pokes.withLock { $0 += 1 }
            }
        }
        defer { listening.cancel() }
        try await within(.seconds(30), "server A's poke stream to say ready, and server A to listen") {
            while pokes.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        }
        let before = pokes.withLock { $0 }

        // A laptop pushes through server B: server A hears of it through the database.
        let laptop = try SyncReplica(
            directory: folder.appending(path: "laptop"), account: account, remote: remote(portB, token: token))
        try await laptop.store("theme", as: String.self).save("dark")
        try await within(.seconds(30), "the laptop's push through server B") { try await laptop.syncNow() }
        try await within(.seconds(30), "a poke from server A after the push through server B") {
            while pokes.withLock({ $0 }) <= before { try await Task.sleep(for: .milliseconds(10)) }
        }

        // And what it pulls from server A is the laptop's change.
        let phone = try SyncReplica(
            directory: folder.appending(path: "phone"), account: account, remote: remote(portA, token: token))
        try await within(.seconds(30), "the phone's pull through server A") { try await phone.syncNow() }
        #expect(try await phone.store("theme", as: String.self).load() == "dark")
        #expect(try await first.terminate() == 0)
        #expect(try await second.terminate() == 0)
    }
}
#endif
