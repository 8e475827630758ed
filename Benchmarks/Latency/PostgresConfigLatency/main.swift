// How long a value another process saves in a PostgreSQL row takes to reach a `ConfigReader`
// watcher through `ValueStoreConfigProvider`, beside how long it takes to reach `changes()` of
// the same row, both in this process and from the same saves. The writer saves `{"count": N}`
// every 20 ms; the provider's extra cost over the store's own delivery is parsing the document
// and notifying the watcher. Run under pg_virtualenv:
//
//     cd Benchmarks && VALUESTORE_BENCHMARK_POSTGRES=1 pg_virtualenv swift run -c release PostgresConfigLatency [COUNT]

import Configuration
import Foundation
import LatencySupport
import PostgresLatencySupport
import PostgresNIO
import ValueStore
import ValueStoreConfiguration
import ValueStorePostgres

let client = runningClientFromEnvironment()

/// The row as a number, stored as the JSON document `{"count": N}` that the provider parses.
func counter(in table: PostgresValueTable) -> ValueStore<Void, Int> {
    table.dataStore("flags").map(
        load: { data in
            let document = try JSONSerialization.jsonObject(with: data) as? [String: Int]
            return document?["count"] ?? 0
        },
        save: { count in Data(#"{"count": \#(count)}"#.utf8) })
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--writer" {
    try await write(Int(arguments[3])!, into: counter(in: PostgresValueTable(client: client, name: arguments[2])))
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let table = try PostgresValueTable(client: client, name: "latency_\(UInt32.random(in: 0...UInt32.max))")
try await table.createIfNeeded()
try await counter(in: table).save(0)

let flags = try await ValueStoreConfigProvider<JSONSnapshot>(store: table.dataStore("flags"), name: "flags")
let config = ConfigReader(providers: [flags])
let following = Task.detached { try await flags.run() }
let store = counter(in: table)

let deliveries = try await Deliveries.measure(
    following: [
        { arrived in
            for await state in store.changes() {
                if case .value(let value) = state { arrived(value) }
            }
        },
        { arrived in
            _ = try? await config.watchInt(forKey: "count") { updates in
                for await value in updates {
                    if let value { arrived(value) }
                }
            }
        },
    ],
    writerArguments: [table.name, String(count)],
    settle: .milliseconds(300))
deliveries[0].report("changes() of the row, cross-process", of: count)
deliveries[1].report("ConfigReader watcher through ValueStoreConfigProvider, cross-process", of: count)
following.cancel()
exit(deliveries[1].median < 5 && deliveries[1].p99 < 20 ? 0 : 1)
