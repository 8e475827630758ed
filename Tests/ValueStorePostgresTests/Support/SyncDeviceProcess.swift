#if PostgreSQL
import Foundation
import ValueStoreTestSupport

/// One device of the sync chaos test: a `ValueStoreTestHelper sync-device` process with a folder
/// of its own, talking to the server through a forwarder of its own, which the test can kill
/// (`kill -9`) and start again from its folder, stop (`SIGSTOP`) and continue.
///
/// ```swift
/// let device = try SyncDeviceProcess(name: "d0", folder: folder, account: "alice", table: "sync")
/// let answer = try await device.send("save lww w1@alice")
/// device.forwarder.mode = .dropResponses
/// ```
///
/// In the chaos test's HTTP mode, the device's replicas sync with a sync server over HTTP
/// instead (``init(name:folder:account:serverPort:tokens:)``), through a forwarder to the server
/// that passes HTTP's bytes as they come (``TCPForwarder/Traffic/bytes``).
final class SyncDeviceProcess {
    let name: String
    let folder: URL
    /// The sync tables' name, or `nil` over HTTP.
    let table: String?
    /// The folder of the accounts' token files, over HTTP.
    let tokens: URL?
    let forwarder: TCPForwarder
    /// The account its current replica syncs.
    private(set) var account: String
    /// Whether it is stopped (`SIGSTOP`): a command sent now is answered once it continues.
    private(set) var isStopped = false
    private var helper: HelperProcess

    struct Exited: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a device on `folder` (made, or copied before), syncing `account` with the sync
    /// tables named `table` through a new forwarder to the server.
    init(name: String, folder: URL, account: String, table: String) throws {
        self.name = name
        self.folder = folder
        self.account = account
        self.table = table
        tokens = nil
        forwarder = try TCPForwarder.toServer()
        helper = try Self.start(
            name: name, folder: folder, account: account, table: table, tokens: nil, port: forwarder.port)
    }

    /// Starts a device on `folder` syncing `account` over HTTP with the sync server listening on
    /// `serverPort`, through a new forwarder to it, with the tokens in the files of `tokens`.
    init(name: String, folder: URL, account: String, serverPort: Int, tokens: URL) throws {
        self.name = name
        self.folder = folder
        self.account = account
        table = nil
        self.tokens = tokens
        // Bytes as they come: the PostgreSQL reading would hold HTTP's answers forever.
        forwarder = try TCPForwarder(to: .tcp(host: "127.0.0.1", port: serverPort), carrying: .bytes)
        helper = try Self.start(
            name: name, folder: folder, account: account, table: nil, tokens: tokens, port: forwarder.port)
    }

    private static func start(name: String, folder: URL, account: String, table: String?, tokens: URL?, port: Int)
        throws -> HelperProcess
    {
        let link =
            if let tokens {
                ["--http", "http://127.0.0.1:\(port)/sync", "--tokens", tokens.path(percentEncoded: false)]
            } else {
                ["127.0.0.1", String(port), table ?? ""]
            }
        return try HelperProcess(arguments: ["sync-device", name, folder.path(percentEncoded: false), account] + link)
    }

    /// Sends one command and returns its answer.
    /// - Throws: `Exited` when the process ended, or printed something other than an answer.
    func send(_ command: String) async throws -> SyncDeviceAnswer {
        try helper.send(command)
        guard let line = await helper.nextLine() else {
            let status = await helper.exitStatus()
            throw Exited(description: "\(name) exited (status \(status)) before it answered '\(command)'")
        }
        do {
            return try JSONDecoder().decode(SyncDeviceAnswer.self, from: Data(line.utf8))
        } catch {
            throw Exited(description: "\(name) answered '\(command)' with '\(line)'")
        }
    }

    /// The replica of `account` (the current one by default), as the device holds it.
    func dump(_ account: String? = nil) async throws -> SyncReplicaDump {
        let answer = try await send(account.map { "dump \($0)" } ?? "dump")
        guard let dump = answer.dump else {
            throw Exited(description: "\(name) could not dump: \(answer.error ?? "no dump")")
        }
        return dump
    }

    /// Switches to `account`'s replica.
    func switchAccount(to account: String) async throws {
        let answer = try await send("switch \(account)")
        if let error = answer.error {
            throw Exited(description: "\(name) could not switch to \(account): \(error)")
        }
        self.account = account
    }

    /// Kills the process (`SIGKILL`), which may be in the middle of anything but a command.
    func kill() {
        helper.kill()
        isStopped = false
    }

    /// Starts the process again, on the same folder and account, after ``kill()``.
    func restart() throws {
        helper = try Self.start(
            name: name, folder: folder, account: account, table: table, tokens: tokens, port: forwarder.port)
    }

    /// Stops the process (`SIGSTOP`): its `run()`, its connections and its timers freeze.
    func stop() {
        Foundation.kill(helper.process.processIdentifier, SIGSTOP)
        isStopped = true
    }

    /// Lets a stopped process go on (`SIGCONT`).
    func resume() {
        Foundation.kill(helper.process.processIdentifier, SIGCONT)
        isStopped = false
    }

    /// Asks the process to quit and waits for it, then stops the forwarder; kills a process that
    /// answers something else.
    func quit() async {
        if isStopped { resume() }
        forwarder.mode = .pass
        do {
            _ = try await send("quit")
            _ = await helper.exitStatus()
        } catch {
            kill()
        }
        forwarder.stop()
    }
}
#endif
