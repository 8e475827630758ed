#if PostgreSQL && Configuration && Hummingbird
import Foundation
import ValueStoreSync
import ValueStoreTestSupport

/// The two `valuestore-sync-server` processes of the chaos test's HTTP mode, on the schedule's
/// sync tables, and the token files of its devices.
///
/// Each device talks to one of the servers through a forwarder of its own (``attach(_:)`` says
/// which); a server killed or terminated is started again at once, and every forwarder to it
/// sends new connections to its new port, as a load balancer in front of a restarted instance
/// would. Tokens are JWTs the servers accept, one file per account in each device's token
/// folder, which the device reads again when a server refuses its token.
///
/// ```swift
/// let servers = try await ChaosSyncServers(table: table.name, root: root, accounts: ["alice", "bob"])
/// let device = try SyncDeviceProcess(
///     name: "d0", folder: folder, account: "alice", serverPort: servers.port(0), tokens: servers.tokens(of: "d0"))
/// servers.attach(device.forwarder, to: 0)
/// ```
final class ChaosSyncServers {
    let table: String
    let root: URL
    let accounts: [String]
    private var processes: [ServerProcess] = []
    private var ports: [Int] = []
    private var forwarders: [[TCPForwarder]] = [[], []]
    private var tokenFolders: [URL] = []
    /// How long from now the tokens written last are good for.
    private var lifetime: TimeInterval

    /// Starts both servers on the sync tables named `table`, with the tokens of `accounts`
    /// good for `lifetime` seconds.
    init(table: String, root: URL, accounts: [String], lifetime: TimeInterval) async throws {
        self.table = table
        self.root = root
        self.accounts = accounts
        self.lifetime = lifetime
        for _ in 0..<2 {
            let (process, port) = try await Self.start(table: table)
            processes.append(process)
            ports.append(port)
        }
    }

    /// Starts a server, again when it exits at once, as a supervisor would: one started while the
    /// database restarts cannot make its tables, and stops.
    private static func start(table: String) async throws -> (ServerProcess, Int) {
        // The devices of a schedule are far chattier than real ones: no rate limit.
        let environment = ServerProcess.environment(
            database: true, extra: ["VALUESTORE_SYNC_TABLE": table, "VALUESTORE_SYNC_REQUESTS_PER_MINUTE": "0"])
        for attempt in 1... {
            let process = try ServerProcess(environment: environment)
            do {
                return (process, try await process.started().port)
            } catch  where attempt < 5 {
                try await Task.sleep(for: .seconds(1))
            }
        }
        fatalError("unreachable")
    }

    /// The port server `index` (0 or 1) listens on now.
    func port(_ index: Int) -> Int { ports[index] }

    /// The folder of `device`'s token files, made and filled the first time.
    func tokens(of device: String) async throws -> URL {
        let folder = root.appending(path: "tokens-\(device)", directoryHint: .isDirectory)
        if !tokenFolders.contains(folder) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            tokenFolders.append(folder)
            try await write(lifetime: lifetime, to: [folder])
        }
        return folder
    }

    /// Sends the new connections of `forwarder` to server `index` from now on, and after each
    /// of its restarts.
    func attach(_ forwarder: TCPForwarder, to index: Int) {
        forwarders[index].append(forwarder)
        forwarder.upstream = .tcp(host: "127.0.0.1", port: ports[index])
    }

    /// Writes every account's token, good for `lifetime` seconds from now, in every device's
    /// folder: a device that is refused its old token reads the new one.
    func renewTokens(lifetime: TimeInterval) async throws {
        self.lifetime = lifetime
        try await write(lifetime: lifetime, to: tokenFolders)
    }

    private func write(lifetime: TimeInterval, to folders: [URL]) async throws {
        for account in accounts {
            let token = try await ServerProcess.token(account: account, expiresIn: lifetime)
            for folder in folders {
                // Atomically: a device reading the file mid-write would send half a token.
                try Data(token.utf8).write(to: folder.appending(path: account), options: .atomic)
            }
        }
    }

    /// Ends server `index` with `kill -9` or SIGTERM, starts it again, and points its forwarders
    /// at the new process; returns how the old one exited.
    func restart(_ index: Int, killing: Bool) async throws -> Int32 {
        let old = processes[index]
        let status: Int32
        if killing {
            old.kill()
            status = try await old.exitStatus()
        } else {
            // A hang guard: the server exits within its idle timeout (10 s) of its last silent
            // request, more on a loaded machine.
            status = try await old.terminate(within: .seconds(45))
        }
        let (process, port) = try await Self.start(table: table)
        processes[index] = process
        ports[index] = port
        for forwarder in forwarders[index] {
            forwarder.upstream = .tcp(host: "127.0.0.1", port: port)
        }
        return status
    }

    /// Asks server `index` for `account`'s records with `owner`'s token (another account's),
    /// and pushes a change of `account`'s with it: both must be refused 403.
    /// - Returns: What was wrong: a status that is not 403, or a body that names a value.
    func foreignTokenProblems(server index: Int, account: String, owner: String) async throws -> [String] {
        let token = try await ServerProcess.token(account: owner)
        let replica = ReplicaID("intruder")
        let pull = try JSONEncoder().encode(
            SyncPullRequest(
                account: account, replica: replica, epoch: nil, cursor: .zero, seen: .zero, limit: 500,
                isResync: true))
        // A value the checker would find if it landed: no write of the model has this name.
        let record = SyncRecord(
            key: "lww", value: Data(#""intruder@\#(owner)""#.utf8),
            stamp: HybridTimestamp(
                milliseconds: Int64(Date().timeIntervalSince1970 * 1_000), counter: 0, replica: replica),
            base: nil, policy: .lastWriterWins)
        let push = try JSONEncoder().encode(
            SyncPushRequest(
                account: account, replica: replica, epoch: nil, seen: .zero, cursor: .zero, changes: [record]))
        var problems: [String] = []
        for (path, body) in [("/sync/v1/pull", pull), ("/sync/v1/push", push)] {
            let answer = try await ServerProcess.request("POST", path, port: ports[index], token: token, body: body)
            let text = String(decoding: answer.body, as: UTF8.self)
            if answer.status != 403 {
                problems.append("\(owner)'s token for \(account) at \(path) was answered \(answer.status): \(text)")
            } else if text.contains("@\(account)") {
                problems.append("the 403 to \(owner)'s token for \(account) at \(path) names a value: \(text)")
            }
        }
        return problems
    }

    /// Ends both servers.
    func stop() async {
        for process in processes {
            _ = try? await process.terminate()
        }
    }
}
#endif
