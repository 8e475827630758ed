// Cross-process delivery latency of `changes()`: this program starts itself again as a writer
// process, which saves a JSON file every 20 ms and prints when each save returned; this process
// follows the file with `changes()` and notes when each value arrived. Both read the system-wide
// monotonic clock, so the difference is the latency from the end of a save in one process to the
// element's arrival in the other: the rename's inotify event, the watcher thread, the signal and
// one load.
//
//     swift run -c release ObservationLatency [COUNT]

import Foundation
import Synchronization
import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the system-wide monotonic clock, comparable between processes.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--writer" {
    // The writer: relaxed durability, so a save returns right after its rename.
    let store = ValueStore<Void, Int>.jsonFile(URL(fileURLWithPath: arguments[2]), options: .cache)
    for value in 1...Int(arguments[3])! {
        try await Task.sleep(for: .milliseconds(20))
        try await store.save(value)
        print(value, monotonicNanoseconds())
        fflush(stdout)
    }
    exit(0)
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let directory = FileManager.default.temporaryDirectory.appending(path: "ObservationLatency-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let url = directory.appending(path: "count.json")

let arrivals = Mutex<[Int: UInt64]>([:])
let observed = ValueStore<Void, Int>.jsonFile(url).changes()
let following = Task {
    for await state in observed {
        let now = monotonicNanoseconds()
        if case .value(let value) = state {
            arrivals.withLock { $0[value] = $0[value] ?? now }
        }
    }
}
try await Task.sleep(for: .milliseconds(100))

let writer = Process()
writer.executableURL = URL(fileURLWithPath: arguments[0])
writer.arguments = ["--writer", url.path(percentEncoded: false), String(count)]
let output = Pipe()
writer.standardOutput = output
try writer.run()
let printed = output.fileHandleForReading.readDataToEndOfFile()
writer.waitUntilExit()
try await Task.sleep(for: .milliseconds(200))
following.cancel()

var latencies: [Double] = []
for line in String(decoding: printed, as: UTF8.self).split(separator: "\n") {
    let fields = line.split(separator: " ")
    guard fields.count == 2, let value = Int(fields[0]), let saved = UInt64(fields[1]) else { continue }
    guard let arrived = arrivals.withLock({ $0[value] }) else { continue }
    // An arrival before the save returned (the event can beat the writer's own return) counts
    // as zero.
    latencies.append(arrived > saved ? Double(arrived - saved) / 1_000_000 : 0)
}
latencies.sort()
guard !latencies.isEmpty else {
    print("no deliveries")
    exit(1)
}
let median = latencies[latencies.count / 2]
let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
print(
    "cross-process delivery: \(latencies.count) of \(count) saves delivered; "
        + String(format: "median %.3f ms, p99 %.3f ms, max %.3f ms", median, p99, latencies.last!))
exit(median < 10 ? 0 : 1)
