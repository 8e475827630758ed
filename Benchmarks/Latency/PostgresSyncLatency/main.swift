// How long a change one device makes takes to reach another device's `changes()` through a
// `PostgresSyncTable`, beside how long a save takes to reach another process's `changes()` of a
// `PostgresValueTable` row: the PostgreSQL store's own cross-machine delivery, measured in the same
// run. A synced change pays the local durable commit, the push (one transaction), the poke (a
// notification), the pull (one transaction) and the receiving device's durable commit, so the
// target is 3× the store's delivery. Run under pg_virtualenv:
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
    try await write(Int(arguments[5])!, into: writer.store("count", as: Int.self))
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
print(String(format: "ratio of medians: %.2f (target <= 3)", ratio))
exit(ratio <= 3 ? 0 : 1)
