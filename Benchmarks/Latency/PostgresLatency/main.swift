// Cross-process delivery latency of `changes()` over PostgreSQL on loopback: this program starts
// itself again as a writer process, which saves a value every 20 ms and prints when each save
// returned; this process follows the key with `changes()` and notes when each value arrived.
// Both read the system-wide monotonic clock, so the difference is the latency from a save in one
// process to the element's arrival in the other: the commit's notification, the listening
// connection, the signal and one load. Run under pg_virtualenv:
//
//     cd Benchmarks && pg_virtualenv swift run -c release PostgresLatency [COUNT]

import Foundation
import PostgresNIO
import Synchronization
import ValueStore
import ValueStorePostgres

#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the system-wide monotonic clock, comparable between processes.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

let environment = ProcessInfo.processInfo.environment
guard let host = environment["PGHOST"], let user = environment["PGUSER"] else {
    print("no PGHOST and PGUSER: run under pg_virtualenv")
    exit(1)
}
let client = PostgresClient(
    configuration: .init(
        host: host, port: environment["PGPORT"].flatMap(Int.init) ?? 5432, username: user,
        password: environment["PGPASSWORD"], database: environment["PGDATABASE"], tls: .disable),
    backgroundLogger: Logger(label: "latency"))
let running = Task.detached { await client.run() }

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--writer" {
    let store = try PostgresValueTable(client: client, name: arguments[2]).store("count", as: Int.self)
    for value in 1...Int(arguments[3])! {
        try await Task.sleep(for: .milliseconds(20))
        let started = monotonicNanoseconds()
        try await store.save(value)
        let ended = monotonicNanoseconds()
        FileHandle.standardOutput.write(Data("\(value) \(started) \(ended)\n".utf8))
    }
    exit(0)
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let table = try PostgresValueTable(client: client, name: "latency_\(UInt32.random(in: 0...UInt32.max))")
try await table.createIfNeeded()

let arrivals = Mutex<[Int: UInt64]>([:])
let observed = table.store("count", as: Int.self).changes()
// Detached: top-level code runs on the main actor, which waits for the writer below.
let following = Task.detached {
    for await state in observed {
        let now = monotonicNanoseconds()
        if case .value(let value) = state {
            arrivals.withLock { $0[value] = $0[value] ?? now }
        }
    }
}
try await Task.sleep(for: .milliseconds(300))

let writer = Process()
writer.executableURL = URL(fileURLWithPath: arguments[0])
writer.arguments = ["--writer", table.name, String(count)]
let output = Pipe()
writer.standardOutput = output
try writer.run()
let printed = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
writer.waitUntilExit()
try await Task.sleep(for: .milliseconds(200))
following.cancel()

/// Median and 99th percentile of `values`, in milliseconds.
func summary(_ values: [Double]) -> String {
    let sorted = values.sorted()
    let median = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    return String(format: "median %.3f ms, p99 %.3f ms, max %.3f ms", median, p99, sorted.last!)
}

// From the end of the save: the notification is sent at commit, so it can arrive before the
// writer's save has returned; those count as zero. From the start is an upper bound.
var fromStart: [Double] = []
var fromEnd: [Double] = []
for line in String(decoding: printed, as: UTF8.self).split(separator: "\n") {
    let fields = line.split(separator: " ").compactMap { UInt64($0) }
    guard fields.count == 3, let arrived = arrivals.withLock({ $0[Int(fields[0])] }) else { continue }
    fromStart.append(arrived > fields[1] ? Double(arrived - fields[1]) / 1_000_000 : 0)
    fromEnd.append(arrived > fields[2] ? Double(arrived - fields[2]) / 1_000_000 : 0)
}
guard !fromStart.isEmpty else {
    print("no deliveries")
    exit(1)
}
print("PostgreSQL cross-process delivery: \(fromStart.count) of \(count) saves delivered")
print("  from the start of the save: \(summary(fromStart))")
print("  from the end of the save:   \(summary(fromEnd))")
let sorted = fromStart.sorted()
let median = sorted[sorted.count / 2]
let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
running.cancel()
exit(median < 5 && p99 < 20 ? 0 : 1)
