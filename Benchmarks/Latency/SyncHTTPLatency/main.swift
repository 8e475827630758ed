// How long a change one device makes takes to reach another device's `changes()` over HTTP (the
// push a POST, the poke a server-sent event, the pull a POST, to the routes served by Hummingbird
// in this process on 127.0.0.1 over a PostgresSyncTable), beside the same through a
// PostgresSyncTable directly, measured in the same run, as PostgresSyncLatency measures it: from
// the start of the save on one device to the element on the other's `changes()`. The writing
// device is another process; the reading device and the server are this one. The targets: the
// median at most 1.5 times the direct path's, the 99th percentile at most twice. Run under
// pg_virtualenv:
//
//     cd Benchmarks && VALUESTORE_BENCHMARK_HTTP=1 pg_virtualenv swift run -c release SyncHTTPLatency [COUNT] [RUNS]

import Foundation
import LatencySupport
import PostgresLatencySupport
import PostgresNIO
import SyncHTTPSupport
import ValueStore
import ValueStorePostgres
import ValueStoreSync

let account = SyncAccount(id: "latency")

/// A device of `account` in `folder`, syncing through `remote`, run() going.
func device(in folder: URL, remote: SyncRemote) throws -> SyncReplica {
    let replica = try SyncReplica(directory: folder, account: account, remote: remote)
    Task.detached { try await replica.run() }
    return replica
}

// The writer: `--writer direct TABLE FOLDER COUNT` or `--writer http URL FOLDER COUNT`.
let arguments = CommandLine.arguments
if arguments.count == 6, arguments[1] == "--writer" {
    let remote =
        arguments[2] == "http"
        ? LoopbackSyncServer.http(URL(string: arguments[3])!, account: account)
        : try PostgresSyncTable(client: runningClientFromEnvironment(), name: arguments[3]).remote(for: account)
    let writer = try device(in: URL(fileURLWithPath: arguments[4]), remote: remote)
    try await write(Int(arguments[5])!, into: writer.store("count", as: Int.self)) {
        try await writer.waitUntilPushed()
    }
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let runs = arguments.count > 2 ? Int(arguments[2])! : 3
let client = runningClientFromEnvironment()
let folder = FileManager.default.temporaryDirectory.appending(path: "sync-http-latency-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

/// One measurement through a new table: directly, or over HTTP to a new loopback server.
func measure(http: Bool, run: Int) async throws -> Deliveries {
    let name = "latency_\(http ? "http" : "direct")_\(UInt32.random(in: 0...UInt32.max))"
    let server = try await LoopbackSyncServer.start(client: client, name: name)
    let here = folder.appending(path: "\(name)-\(run)")
    let reader = try device(
        in: here.appending(path: "reader"),
        remote: http ? server.http(for: account) : server.table.remote(for: account))
    let deliveries = try await Deliveries.measure(
        observing: reader.store("count", as: Int.self),
        writerArguments: [
            http ? "http" : "direct", http ? server.url.absoluteString : server.table.name,
            here.appending(path: "writer").path(percentEncoded: false), String(count),
        ],
        settle: .milliseconds(500))
    deliveries.report(
        http
            ? "changes() of a synced key on another device, over HTTP and server-sent events"
            : "changes() of a synced key on another device, through PostgresSyncTable", of: count)
    return deliveries
}

// Direct and HTTP in turn, `runs` times: the machine's speed drifts, and each pair is measured
// close together.
var medians: [Double] = []
var p99s: [Double] = []
for run in 1...runs {
    let direct = try await measure(http: false, run: run)
    let http = try await measure(http: true, run: run)
    medians.append(http.median / direct.median)
    p99s.append(http.p99 / direct.p99)
    print(
        String(
            format: "run %d: ratio of medians %.2f (target <= 1.5), of 99th percentiles %.2f (target <= 2)", run,
            medians.last!, p99s.last!))
}
let median = medians.sorted()[medians.count / 2]
let p99 = p99s.sorted()[p99s.count / 2]
print(
    String(
        format: "over %d runs: ratios of medians %.2f to %.2f, middle %.2f; "
            + "of 99th percentiles %.2f to %.2f, middle %.2f",
        runs, medians.min()!, medians.max()!, median, p99s.min()!, p99s.max()!, p99))
exit(median <= 1.5 && p99 <= 2 ? 0 : 1)
