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
        let started = monotonicNanoseconds()
        try await store.save(value)
        let ended = monotonicNanoseconds()
        FileHandle.standardOutput.write(Data("\(value) \(started) \(ended)\n".utf8))
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
// Detached: top-level code runs on the main actor, which waits for the writer below.
let following = Task.detached {
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

// From the start of the save (an upper bound: it includes the writer's own save), and from its
// end (the event often arrives before the writer's save has returned: those count as zero).
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
print("cross-process delivery: \(fromStart.count) of \(count) saves delivered")
print("  from the start of the save: \(summary(fromStart))")
print("  from the end of the save:   \(summary(fromEnd))")
let median = fromStart.sorted()[fromStart.count / 2]
exit(median < 10 ? 0 : 1)
