// Cross-process delivery latency of `changes()`: this program starts itself again as a writer
// process, which saves a JSON file every 20 ms and prints when each save returned; this process
// follows the file with `changes()` and notes when each value arrived. Both read the system-wide
// monotonic clock, so the difference is the latency from the end of a save in one process to the
// element's arrival in the other: the rename's inotify event, the watcher thread, the signal and
// one load.
//
//     swift run -c release ObservationLatency [COUNT]

import Foundation
import LatencySupport
import ValueStore

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--writer" {
    // The writer: relaxed durability, so a save returns right after its rename.
    try await write(Int(arguments[3])!, into: .jsonFile(URL(fileURLWithPath: arguments[2]), options: .cache))
}

let count = arguments.count > 1 ? Int(arguments[1])! : 200
let directory = FileManager.default.temporaryDirectory.appending(path: "ObservationLatency-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let url = directory.appending(path: "count.json")

let deliveries = try await Deliveries.measure(
    observing: .jsonFile(url), writerArguments: [url.path(percentEncoded: false), String(count)],
    settle: .milliseconds(100))
deliveries.report("cross-process delivery", of: count)
exit(deliveries.median < 10 ? 0 : 1)
