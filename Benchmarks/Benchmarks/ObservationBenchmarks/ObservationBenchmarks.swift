import Benchmark
import Foundation
import Observation
import ValueStore

/// An `@Observable` class with one stored property: the floor for reading `StoredValue.value`.
@MainActor
@Observable
final class PlainModel {
    var value = 1
}

/// Reads `StoredValue.value` on the main actor, as views do.
@MainActor
func readStoredValue(_ stored: StoredValue<Int>, _ iterations: Range<Int>) {
    for _ in iterations {
        blackHole(stored.value)
    }
}

/// Reads the plain model's property on the main actor.
@MainActor
func readPlainModel(_ model: PlainModel, _ iterations: Range<Int>) {
    for _ in iterations {
        blackHole(model.value)
    }
}

/// One delivery per sample, timed from the end of the save to the element's arrival.
func perDelivery() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock], scalingFactor: .one, maxDuration: .seconds(2), maxIterations: 200_000)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock],
        scalingFactor: .mega,
        maxDuration: .seconds(2),
        maxIterations: 100
    )

    // In-process delivery: the store's save has signalled before it returned; what is timed is
    // the element's arrival, which is the signal's hand-off plus one load of the store.
    let memory = ValueStore<Void, Int>.inMemory(0)
    Benchmark("changes(): in-process delivery", configuration: perDelivery()) { benchmark in
        var states = memory.changes().makeAsyncIterator()
        _ = await states.next()
        try await memory.save(1)
        benchmark.startMeasurement()
        blackHole(await states.next())
        benchmark.stopMeasurement()
    }
    // The floor: one bare AsyncStream hand-off plus one load of the same store, timed the same
    // way (the yield happens before the clock starts, as the save's signal does).
    Benchmark("Floor: AsyncStream hand-off + inMemory load", configuration: perDelivery()) { benchmark in
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var iterator = signals.makeAsyncIterator()
        try await memory.save(1)
        signal.yield()
        benchmark.startMeasurement()
        blackHole(await iterator.next())
        blackHole(try await memory.load())
        benchmark.stopMeasurement()
    }

    // The same for a JSON file: the load reads and decodes the file.
    let directory = FileManager.default.temporaryDirectory.appending(path: "ObservationBenchmarks-\(UUID().uuidString)")
    let file = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json"), options: .cache)
    // An app keeps its subscriptions: this one holds the directory's watch open for both rows,
    // so no sample pays for starting the watcher's thread, and both pay for its work on each save.
    let keeper = file.changeSignals(())
    Benchmark("changes(): in-process delivery, jsonFile", configuration: perDelivery()) { benchmark in
        _ = keeper
        var states = file.changes().makeAsyncIterator()
        _ = await states.next()
        try await file.save(1)
        benchmark.startMeasurement()
        blackHole(await states.next())
        benchmark.stopMeasurement()
    }
    Benchmark("Floor: AsyncStream hand-off + jsonFile load", configuration: perDelivery()) { benchmark in
        _ = keeper
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var iterator = signals.makeAsyncIterator()
        try await file.save(1)
        signal.yield()
        benchmark.startMeasurement()
        blackHole(await iterator.next())
        blackHole(try await file.load())
        benchmark.stopMeasurement()
    }

    // Reading StoredValue.value against a stored property of an @Observable class, on the main
    // actor, a million reads per sample.
    Benchmark("StoredValue.value: read") { benchmark in
        let stored = await StoredValue.loaded(ValueStore<Void, Int>.inMemory(1), default: 0)
        benchmark.startMeasurement()
        await readStoredValue(stored, benchmark.scaledIterations)
    }
    Benchmark("Floor: @Observable stored property read") { benchmark in
        let model = await PlainModel()
        benchmark.startMeasurement()
        await readPlainModel(model, benchmark.scaledIterations)
    }
}
