// The instrumented `jsonFile` load against the bare one, interleaved in one process: each round
// loads the same 1 KB file once through each store, in alternating order, so that the machine's
// drifting speed (which makes package-benchmark's separate processes swing by ±30% on a shared
// machine) falls on both alike. The instrumented store uses swift-log's, swift-metrics' and the
// tracer's no-op backends. Prints both medians and their ratio (target: ≤ 1.1).
//
//     cd Benchmarks && swift run -c release InstrumentedLoad [ROUNDS]

import Foundation
import Logging
import Metrics
import Tracing
import ValueStore
import ValueStoreObservability

struct Settings: Codable, Equatable, Sendable {
    var names: [String]
    var numbers: [Int]
}

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1])! : 20_000
let directory = FileManager.default.temporaryDirectory.appending(path: "InstrumentedLoad-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let url = directory.appending(path: "settings.json")

// About 1 KB of JSON, as the benchmark's 1 KB rows.
let value = Settings(names: (0..<40).map { "name \($0)" }, numbers: Array(0..<60))
let bare = ValueStore<Void, Settings>.jsonFile(url)
try await bare.save(value)
let instrumented = ValueStore<Void, Settings>.jsonFile(url).instrumented(
    as: "settings",
    logger: Logger(label: "overhead") { _ in SwiftLogNoOpLogHandler() },
    metrics: NOOPMetricsHandler.instance,
    tracer: NoOpTracer())
print("file: \(try Data(contentsOf: url).count) bytes, \(rounds) rounds")

/// The time of one load, in nanoseconds.
func time(_ store: ValueStore<Void, Settings>) async throws -> Double {
    let start = ContinuousClock.now
    let loaded = try await store.load()
    let elapsed = ContinuousClock.now - start
    precondition(loaded == value)
    return Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9
}

// Off the main actor, where top-level code runs, as a server's request handlers are.
let (bareTimes, instrumentedTimes) = try await Task.detached {
    var bareTimes: [Double] = []
    var instrumentedTimes: [Double] = []
    for round in 0..<(rounds + 1_000) {
        let (first, second) = round.isMultiple(of: 2) ? (bare, instrumented) : (instrumented, bare)
        let a = try await time(first)
        let b = try await time(second)
        // The first thousand rounds warm up.
        guard round >= 1_000 else { continue }
        let (bareTime, instrumentedTime) = round.isMultiple(of: 2) ? (a, b) : (b, a)
        bareTimes.append(bareTime)
        instrumentedTimes.append(instrumentedTime)
    }
    return (bareTimes, instrumentedTimes)
}.value

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let ratio = median(instrumentedTimes) / median(bareTimes)
print(String(format: "bare load: median %.0f ns", median(bareTimes)))
print(String(format: "instrumented load (no-op backends): median %.0f ns", median(instrumentedTimes)))
print(String(format: "ratio %.3f (target <= 1.1)", ratio))
exit(ratio <= 1.1 ? 0 : 1)
