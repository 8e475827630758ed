// How long a change one device makes takes to reach another device's `changes()` through a
// `PostgresSyncTable`, beside how long a save takes to reach another process's `changes()` of a
// `PostgresValueTable` row: the PostgreSQL store's own cross-machine delivery, measured in the same
// run. A synced change pays the local durable commit (an entry appended to the replica's journal),
// the push (one statement, or a read and one statement), the poke (a notification), the pull (one
// statement) and the receiving device's durable commit, so the target is 2.5× the store's delivery.
// Both spans are what a user sees: from the start of the save on one device (or client) to the
// element on the other's `changes()`, and a save overtaken by the next one before it arrived
// counts as seen when the next one arrived. Run under pg_virtualenv:
//
//     cd Benchmarks && VALUESTORE_BENCHMARK_POSTGRES=1 pg_virtualenv swift run -c release PostgresSyncLatency [COUNT]

import Foundation
import LatencySupport
import PostgresLatencySupport
import PostgresNIO
import ValueStore
import ValueStorePostgres
import ValueStoreSync

let client = runningClientFromEnvironment()
let account = SyncAccount(id: "latency")

/// A device of `account` in `folder`, syncing through the tables named `name`, run() going.
func device(in folder: URL, name: String) throws -> SyncReplica {
    let table = try PostgresSyncTable(client: client, name: name)
    let replica = try SyncReplica(directory: folder, account: account, remote: table.remote(for: account))
    Task.detached { try await replica.run() }
    return replica
}

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "--writer", arguments[2] == "row" {
    try await write(Int(arguments[4])!, into: PostgresValueTable(client: client, name: arguments[3]).store("count"))
}
if arguments.count == 6, arguments[1] == "--writer", arguments[2] == "sync" {
    let writer = try device(in: URL(fileURLWithPath: arguments[4]), name: arguments[3])
    try await write(Int(arguments[5])!, into: writer.store("count", as: Int.self)) {
        try await writer.waitUntilPushed()
    }
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let folder = FileManager.default.temporaryDirectory.appending(path: "sync-latency-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

let suffix = UInt32.random(in: 0...UInt32.max)
let rows = try PostgresValueTable(client: client, name: "latency_\(suffix)")
try await rows.createIfNeeded()
let row = try await Deliveries.measure(
    observing: rows.store("count", as: Int.self), writerArguments: ["row", rows.name, String(count)],
    settle: .milliseconds(300))
row.report("changes() of a PostgresValueTable row, cross-process", of: count)

let sync = try PostgresSyncTable(client: client, name: "latency_sync_\(suffix)")
try await sync.createIfNeeded()
let reader = try device(in: folder.appending(path: "reader"), name: sync.name)
let synced = try await Deliveries.measure(
    observing: reader.store("count", as: Int.self),
    writerArguments: ["sync", sync.name, folder.appending(path: "writer").path(percentEncoded: false), String(count)],
    settle: .milliseconds(500))
synced.report("changes() of a synced key on another device, through PostgresSyncTable", of: count)
let ratio = synced.median / row.median
print(String(format: "ratio of medians from the start of the save: %.2f (target <= 2.5)", ratio))
try await breakdown(of: sync, in: folder.appending(path: "parts"), count: count)
exit(ratio <= 2.5 ? 0 : 1)

/// Where a synced change's time goes: the parts of its path, each measured alone, `count` times.
func breakdown(of sync: PostgresSyncTable, in folder: URL, count: Int) async throws {
    func median(_ body: (Int) async throws -> Void) async throws -> Double {
        var times: [Double] = []
        for index in 0..<count {
            let start = monotonicNanoseconds()
            try await body(index)
            times.append(Double(monotonicNanoseconds() - start) / 1_000_000)
        }
        return times.sorted()[times.count / 2]
    }
    let alone = try SyncReplica(
        directory: folder, account: SyncAccount(id: "parts"),
        remote: InMemorySyncServer().remote(for: SyncAccount(id: "parts")))
    let local = alone.store("count", as: Int.self)
    let save = try await median { try await local.save($0) }
    let remote = sync.remote(for: SyncAccount(id: "parts"))
    let replica = ReplicaID("parts")
    // A push names the server's epoch, which a first pull gives.
    let epoch = try await remote.pull(
        SyncPullRequest(
            account: "parts", replica: replica, epoch: nil, cursor: .zero, seen: .zero, limit: 1, isResync: false)
    ).epoch
    let push = try await median { index in
        let stamp = HybridTimestamp(milliseconds: Int64(index + 1), counter: 0, replica: replica)
        let record = SyncRecord(
            key: "count", value: Data("\(index)".utf8), stamp: stamp, base: nil, policy: .lastWriterWins)
        let response = try await remote.push(
            SyncPushRequest(
                account: "parts", replica: replica, epoch: epoch, seen: .zero, cursor: .zero, changes: [record]))
        guard case .accepted = response.outcomes.first else { fatalError("the push was not accepted: \(response)") }
    }
    let pull = try await median { _ in
        _ = try await remote.pull(
            SyncPullRequest(
                account: "parts", replica: ReplicaID("puller"), epoch: nil, cursor: .zero, seen: .zero, limit: 1,
                isResync: false))
    }
    print(
        String(
            format: "the parts, medians: a synced key's local save %.3f ms, a push %.3f ms, a pull %.3f ms", save, push,
            pull))
}
