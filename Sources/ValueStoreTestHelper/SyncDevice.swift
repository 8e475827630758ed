// The sync device mode of the helper: one device of the PostgreSQL sync chaos test, in a process
// of its own, so the test can kill it (`kill -9`), stop it (`SIGSTOP`) and start it again from
// its folder.
//
//     ValueStoreTestHelper sync-device NAME DIRECTORY ACCOUNT HOST PORT TABLE
//     ValueStoreTestHelper sync-device NAME DIRECTORY ACCOUNT --http URL --tokens DIRECTORY
//
// opens a replica of ACCOUNT in DIRECTORY that syncs with the PostgreSQL sync tables named TABLE
// through a client to HOST:PORT (a test's forwarder; the credentials come from PGUSER,
// PGPASSWORD and PGDATABASE), or with a sync server at URL over HTTP (see SyncDeviceHTTP.swift:
// each account's token is read from a file named for it in the tokens DIRECTORY, and read again
// when the server refuses it), runs its `run()` in the background, and answers each command on
// standard input with one line of JSON on standard output (`SyncDeviceAnswer`), once it is done:
//
//     save KEY VALUE         saves VALUE, a string, in one of the chaos keys (`ChaosKeys`)
//     update KEY VALUE       updates the key to VALUE (through `update`, as a compareAndSet user)
//     remove KEY             removes the key
//         each answers the key's record before and after the write, as the replica held it
//     merge-increment KEY    adds one to NAME's count in the `.merge` counter KEY
//     read KEY DEFAULT       loads the key through `.default(DEFAULT)`, which must never write
//     make-stores [ACCOUNT]  makes the counter's store, which gives the replica its merge
//     sync [ACCOUNT]         `syncNow()`, answered within 4 seconds: `error` says it failed or
//                            is still running (it goes on)
//     dump [ACCOUNT]         the replica's records, pending count, rejected changes, archive
//     switch ACCOUNT         stops the replica's `run()` and opens (or takes up again) ACCOUNT's
//     clock OFFSET_MS        the device's clock runs OFFSET_MS milliseconds off from now on
//     quit                   answers, then exits
//
// An acknowledged write is one the process answered: its commit is in the folder.

import Foundation

#if PostgreSQL
import Logging
import PostgresNIO
import Synchronization
import ValueStore
import ValueStorePostgres
import ValueStoreSync
import ValueStoreTestSupport

func syncDevice(_ arguments: [String]) async throws {
    if arguments.count == 7, arguments[3] == "--http" {
        try await syncDeviceOverHTTP(arguments)
        return
    }
    guard arguments.count == 6, let port = Int(arguments[4]) else {
        FileHandle.standardError.write(
            Data(
                "usage: sync-device NAME DIRECTORY ACCOUNT (HOST PORT TABLE | --http URL --tokens DIRECTORY)\n".utf8))
        exit(64)
    }
    logErrorsOnly()
    var configuration = try postgresConfiguration(host: arguments[3], port: port)
    configuration.options.connectTimeout = .seconds(2)
    try await withPostgresClient(configuration) { client in
        var table = try PostgresSyncTable(client: client, name: arguments[5])
        // A request through a blackholed forwarder gives up within seconds, and a dead
        // listening connection is found soon.
        table.connectTimeout = .seconds(2)
        table.operationTimeout = .seconds(5)
        table.heartbeatInterval = .seconds(1)
        let device = SyncDevice(
            name: arguments[0], directory: URL(fileURLWithPath: arguments[1]), remote: table.remote(for:),
            account: arguments[2])
        try await device.serve()
    }
}

/// Sends logs to standard error, errors only: standard output carries the answers.
func logErrorsOnly() {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .error
        return handler
    }
}

/// One device: a replica per account it has used in its directory, one of them current and
/// running, and the commands that drive them. Used from one task.
final class SyncDevice {
    let name: String
    let directory: URL
    /// The remote of each account's replica: the PostgreSQL tables, or a sync server over HTTP.
    let remote: @Sendable (_ account: SyncAccount) -> SyncRemote
    /// The clock's offset, in milliseconds, read by every replica's clock.
    let offset = Offset()
    private var replicas: [String: SyncReplica] = [:]
    private var runs: [String: Task<Void, any Error>] = [:]
    private var current: String

    final class Offset: Sendable {
        let milliseconds = Mutex<Int64>(0)
    }

    init(
        name: String, directory: URL, remote: @escaping @Sendable (_ account: SyncAccount) -> SyncRemote,
        account: String
    ) {
        self.name = name
        self.directory = directory
        self.remote = remote
        current = account
    }

    /// Answers commands until `quit`, or until standard input ends.
    func serve() async throws {
        try await start(current)
        while let line = await waitForALine() {
            let words = line.split(separator: " ").map(String.init)
            let answer: SyncDeviceAnswer
            do {
                answer = try await handle(words)
            } catch {
                answer = SyncDeviceAnswer(error: "\(error)")
            }
            var output = try JSONEncoder().encode(answer)
            output.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(output)
            if words.first == "quit" { break }
        }
        for run in runs.values { run.cancel() }
    }

    private func handle(_ words: [String]) async throws -> SyncDeviceAnswer {
        switch (words.first ?? "", words.count) {
        case ("save", 3), ("update", 3), ("remove", 2):
            let replica = try replica(current)
            let (key, value) = (words[1], words.count == 3 ? words[2] : "")
            let store = ChaosKeys.store(key, in: replica)
            let written = try await replica.observing(key) {
                switch words[0] {
                case "save": try await store.save(value)
                case "update": try await store.optional().update { $0 = value }
                default: try await store.remove()
                }
            }
            return SyncDeviceAnswer(written: written)
        case ("merge-increment", 2) where words[1] == ChaosKeys.counter:
            try await ChaosKeys.increment(name, in: replica(current))
            return SyncDeviceAnswer()
        case ("read", 3):
            let value = try await ChaosKeys.store(words[1], in: replica(current)).default(words[2]).load()
            return SyncDeviceAnswer(value: value)
        case ("make-stores", 1...2):
            _ = ChaosKeys.counter(in: try replica(words.count == 2 ? words[1] : current))
            return SyncDeviceAnswer()
        case ("sync", 1...2):
            let replica = try replica(words.count == 2 ? words[1] : current)
            let failure = await firstOf(seconds: 4, or: "still syncing after 4 s") {
                do {
                    try await replica.syncNow()
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            return SyncDeviceAnswer(error: failure)
        case ("dump", 1...2):
            let replica = try replica(words.count == 2 ? words[1] : current)
            return SyncDeviceAnswer(dump: try await SyncReplicaDump(device: name, replica: replica))
        case ("switch", 2):
            runs[current]?.cancel()
            current = words[1]
            try await start(current)
            return SyncDeviceAnswer()
        case ("clock", 2):
            guard let milliseconds = Int64(words[1]) else { break }
            offset.milliseconds.withLock { $0 = milliseconds }
            return SyncDeviceAnswer()
        case ("quit", 1):
            return SyncDeviceAnswer()
        default:
            break
        }
        return SyncDeviceAnswer(error: "unknown command: \(words.joined(separator: " "))")
    }

    /// The replica of `account` in the device's directory, opened on first use.
    private func replica(_ account: String) throws -> SyncReplica {
        if let replica = replicas[account] {
            return replica
        }
        var options = SyncOptions()
        let offset = offset
        options.clock = SyncClock {
            Date().addingTimeInterval(Double(offset.milliseconds.withLock { $0 }) / 1_000)
        }
        // Small batches and pages, so a few changes make several of each; quick retries.
        options.pushBatchSize = 3
        options.pullPageSize = 3
        options.retryDelay = .milliseconds(100)
        options.maximumRetryDelay = .seconds(1)
        options.pollInterval = .seconds(2)
        let sync = SyncAccount(id: account)
        let replica = try SyncReplica(
            directory: directory, account: sync, remote: remote(sync), options: options)
        replicas[account] = replica
        return replica
    }

    /// Starts the `run()` of `account`'s replica, once its earlier run, if any, has ended: one
    /// run at a time, as a device has.
    private func start(_ account: String) async throws {
        let replica = try replica(account)
        if let earlier = runs[account] {
            earlier.cancel()
            _ = await earlier.result
        }
        runs[account] = Task { try await replica.run() }
    }
}

/// What `body` returns, or `timeout` if `body` takes more than `seconds`; `body` goes on then.
private func firstOf(
    seconds: Double,
    or timeout: String,
    _ body: @escaping @Sendable () async -> String?
) async -> String? {
    await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
        let first = FirstAnswer(continuation)
        Task { first.resume(returning: await body()) }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            first.resume(returning: timeout)
        }
    }
}

/// A continuation that the first of two tasks resumes; the second finds it taken.
private final class FirstAnswer: Sendable {
    private let continuation: Mutex<CheckedContinuation<String?, Never>?>

    init(_ continuation: CheckedContinuation<String?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(returning answer: String?) {
        continuation.withLock { $0.take() }?.resume(returning: answer)
    }
}
#else
func syncDevice(_ arguments: [String]) async throws {
    FileHandle.standardError.write(Data("built without the PostgreSQL trait\n".utf8))
    exit(64)
}
#endif
