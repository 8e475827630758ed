// Cross-process delivery latency of `changes()` over PostgreSQL on loopback: this program starts
// itself again as a writer process, which saves a value every 20 ms and prints when each save
// returned; this process follows the key with `changes()` and notes when each value arrived.
// Both read the system-wide monotonic clock, so the difference is the latency from a save in one
// process to the element's arrival in the other: the commit's notification, the listening
// connection, the signal and one load. Run under pg_virtualenv:
//
//     cd Benchmarks && pg_virtualenv swift run -c release PostgresLatency [COUNT]

import Foundation
import LatencySupport
import PostgresLatencySupport
import PostgresNIO
import ValueStore
import ValueStorePostgres

let client = runningClientFromEnvironment()

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--writer" {
    try await write(Int(arguments[3])!, into: PostgresValueTable(client: client, name: arguments[2]).store("count"))
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let table = try PostgresValueTable(client: client, name: "latency_\(UInt32.random(in: 0...UInt32.max))")
try await table.createIfNeeded()

let deliveries = try await Deliveries.measure(
    observing: table.store("count", as: Int.self), writerArguments: [table.name, String(count)],
    settle: .milliseconds(300))
// From the end of the save: the notification is sent at commit, so it can arrive before the
// writer's save has returned.
deliveries.report("PostgreSQL cross-process delivery", of: count)
exit(deliveries.median < 5 && deliveries.p99 < 20 ? 0 : 1)
