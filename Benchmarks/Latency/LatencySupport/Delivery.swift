// What both latency tools do around their store: one process saves a value every 20 ms and
// prints when each save started and returned; the other follows the store with `changes()` and
// notes when each value arrived. Both read the system-wide monotonic clock, so the differences are
// latencies from one process to the other.

import Foundation
import Synchronization
public import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the system-wide monotonic clock, comparable between processes.
public func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The writer: saves 1 through `count` into `store`, one every 20 ms, printing
/// `VALUE STARTED ENDED` for each save, then runs `finish` and exits (a synced device first
/// waits until its last save is pushed: saved, it is only pending).
public func write(
    _ count: Int,
    into store: ValueStore<Void, Int>,
    finish: () async throws -> Void = {}
) async throws -> Never {
    for value in 1...count {
        try await Task.sleep(for: .milliseconds(20))
        let started = monotonicNanoseconds()
        try await store.save(value)
        let ended = monotonicNanoseconds()
        FileHandle.standardOutput.write(Data("\(value) \(started) \(ended)\n".utf8))
    }
    try await finish()
    exit(0)
}

/// Latencies in milliseconds of each save until the follower saw it: from the start of each
/// save (what a user sees, the writer's own save included) and from its end (a value can arrive
/// before the writer's save has returned; those count as zero). A save counts as seen when its
/// value or a later one arrived (the writer saves increasing values): a save whose value was
/// overtaken by the next one before it arrived is seen when that one arrived, not left out.
public struct Deliveries {
    /// From the start of each save.
    public var fromStart: [Double] = []
    /// From the end of each save.
    public var fromEnd: [Double] = []

    /// The median from the start of the save, in milliseconds.
    public var median: Double { Self.median(fromStart.sorted()) }
    /// The 99th percentile from the start of the save, in milliseconds.
    public var p99: Double { Self.p99(fromStart.sorted()) }

    static func median(_ sorted: [Double]) -> Double { sorted[sorted.count / 2] }
    static func p99(_ sorted: [Double]) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))] }

    /// Follows `observed` while this program runs again as the writer with `writerArguments`
    /// (after `--writer`), waiting `settle` first so the observer is listening.
    public static func measure(
        observing observed: ValueStore<Void, Int>,
        writerArguments: [String],
        settle: Duration
    ) async throws -> Deliveries {
        let changes = observed.changes()
        let deliveries = try await measure(
            following: [
                { arrived in
                    for await state in changes {
                        if case .value(let value) = state { arrived(value) }
                    }
                }
            ],
            writerArguments: writerArguments, settle: settle)
        return deliveries[0]
    }

    /// Runs each follower, which calls `arrived` with each value it sees, while this program
    /// runs again as the writer with `writerArguments` (after `--writer`), waiting `settle` first
    /// so the followers are listening; returns each follower's deliveries, from the same saves.
    public static func measure(
        following followers: [@Sendable (_ arrived: @escaping @Sendable (_ value: Int) -> Void) async -> Void],
        writerArguments: [String],
        settle: Duration
    ) async throws -> [Deliveries] {
        let arrivals = followers.map { _ in Arrivals() }
        // Detached: top-level code runs on the main actor, which waits for the writer below.
        let following = followers.enumerated().map { index, follow in
            Task.detached {
                await follow { value in
                    let now = monotonicNanoseconds()
                    arrivals[index].times.withLock { $0[value] = $0[value] ?? now }
                }
            }
        }
        try await Task.sleep(for: settle)

        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        writer.arguments = ["--writer"] + writerArguments
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        let printed = await Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
        writer.waitUntilExit()
        try await Task.sleep(for: .milliseconds(200))
        for task in following {
            task.cancel()
        }

        let saves = String(decoding: printed, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: " ").compactMap { UInt64($0) }
        }.filter { $0.count == 3 }
        return arrivals.indices.map { index in
            let times = arrivals[index].times.withLock { $0 }
            // When each value, or a later one, first arrived.
            var seen: [Int: UInt64] = [:]
            var earliest: UInt64?
            for value in stride(from: times.keys.max() ?? 0, through: 1, by: -1) {
                if let arrived = times[value] { earliest = min(earliest ?? arrived, arrived) }
                seen[value] = earliest
            }
            var deliveries = Deliveries()
            for fields in saves {
                guard let arrived = seen[Int(fields[0])] else { continue }
                deliveries.fromStart.append(arrived > fields[1] ? Double(arrived - fields[1]) / 1_000_000 : 0)
                deliveries.fromEnd.append(arrived > fields[2] ? Double(arrived - fields[2]) / 1_000_000 : 0)
                if ProcessInfo.processInfo.environment["VALUESTORE_LATENCY_TRACE"] != nil {
                    // One line a save: how long the writer's own save took, and its delivery.
                    let save = Double(fields[2] - fields[1]) / 1_000_000
                    let delivered = arrived > fields[1] ? Double(arrived - fields[1]) / 1_000_000 : 0
                    let line = "save \(fields[0]): \(save) ms, delivered after \(delivered) ms\n"
                    FileHandle.standardError.write(Data(line.utf8))
                }
            }
            return deliveries
        }
    }

    /// When each value first arrived at one follower, on the monotonic clock.
    final class Arrivals: Sendable {
        let times = Mutex<[Int: UInt64]>([:])
    }

    /// Prints how many of `count` saves arrived and both summaries; exits with 1 when none did.
    public func report(_ title: String, of count: Int) {
        guard !fromStart.isEmpty else {
            print("no deliveries")
            exit(1)
        }
        print("\(title): \(fromStart.count) of \(count) saves delivered")
        print("  from the start of the save: \(Self.summary(fromStart))")
        print("  from the end of the save:   \(Self.summary(fromEnd))")
    }

    /// Median, 99th percentile and maximum of `values`, in milliseconds.
    static func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return String(format: "median %.3f ms, p99 %.3f ms, max %.3f ms", median(sorted), p99(sorted), sorted.last!)
    }
}
