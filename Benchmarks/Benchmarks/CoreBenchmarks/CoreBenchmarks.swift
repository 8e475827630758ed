import Benchmark
import Foundation
import Synchronization
import ValueStore

/// The floor for in-memory stores: a lock-guarded variable behind an async function call.
final class LockedVariable: Sendable {
    private let value = Mutex(1)

    @inline(never)
    func read() async -> Int {
        value.withLock { $0 }
    }

    @inline(never)
    func readNow() -> Int {
        value.withLock { $0 }
    }

    @inline(never)
    func write(_ newValue: Int) async {
        value.withLock { $0 = newValue }
    }
}

/// An asynchronous conversion that never suspends, so that the async map rows time the
/// combinator rather than the conversion.
@inline(never)
func adding(_ amount: Int, to value: Int) async -> Int {
    value + amount
}

/// Loads `store` from the main actor, where apps call.
@MainActor
func loadFromMainActor(_ store: ValueStore<Void, Int>, _ iterations: Range<Int>) async throws {
    for _ in iterations {
        blackHole(try await store.load())
    }
}

/// Main-actor rows time a million loads per sample, so the one hop to the main actor that starts
/// each sample costs under a hundredth of a nanosecond per load.
func fromMainActor() -> Benchmark.Configuration {
    Benchmark.Configuration(metrics: [.wallClock], scalingFactor: .mega, maxDuration: .seconds(2), maxIterations: 100)
}

let benchmarks: @Sendable () -> Void = {
    // Each sample times 1,000 operations; medians are reported per operation.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    let floor = LockedVariable()
    Benchmark("Floor: locked read through an async call") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(await floor.read())
        }
    }
    Benchmark("Floor: locked write through an async call") { benchmark in
        for index in benchmark.scaledIterations {
            await floor.write(index)
        }
    }

    // Saving one value over and over (a toggle saved again, a form saved unchanged): a client
    // measured this at 1.82-1.88x its floor while the row above, saving a new value each time,
    // held at 1.32x.
    Benchmark("Floor: locked write of the same value through an async call") { benchmark in
        for _ in benchmark.scaledIterations {
            await floor.write(1)
        }
    }

    // The same read through an opaque async closure, the shape of every store operation: it
    // shows what a closure call costs over a direct call, for the closure-path rows.
    let readThroughClosure: @Sendable () async -> Int = { floor.readNow() }
    Benchmark("Floor: locked read through an async closure") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(await readThroughClosure())
        }
    }

    let memory = ValueStore<Void, Int>.inMemory(1)
    Benchmark("inMemory: load") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await memory.load())
        }
    }
    Benchmark("inMemory: load through the closure") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await memory.load(()))
        }
    }
    Benchmark("inMemory: save") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(try await memory.save(index))
        }
    }

    Benchmark("inMemory: save the same value repeatedly") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await memory.save(1))
        }
    }

    let chained = ValueStore<Void, Int>.inMemory(1)
        .map(load: { $0 + 1 }, save: { $0 - 1 })
        .mapError { $0 }
        .default(0)
        .require(Int.self)
        .provide(0)
    Benchmark("Five combinators: load") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await chained.load())
        }
    }

    Benchmark("Five combinators: load through the closure") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await chained.load(()))
        }
    }

    // The asynchronous map, as a decrypting service would use it: one combinator whose
    // conversions are async functions.
    let asyncMapped = ValueStore<Void, Int>.inMemory(1)
        .map(load: { await adding(1, to: $0) }, save: { await adding(-1, to: $0) })
    Benchmark("async map: load") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await asyncMapped.load())
        }
    }

    let cached = ValueStore<Void, Int>.inMemory(1).cached()
    Benchmark("cached(): hit") { benchmark in
        _ = try await cached.load()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await cached.load())
        }
    }

    // From the main actor: the same loads, which must not hop to another executor and back.
    Benchmark("inMemory: load from @MainActor", configuration: fromMainActor()) { benchmark in
        try await loadFromMainActor(memory, benchmark.scaledIterations)
    }
    Benchmark("cached(): hit from @MainActor", configuration: fromMainActor()) { benchmark in
        _ = try await cached.load()
        try await loadFromMainActor(cached, benchmark.scaledIterations)
    }

    // A cached file, as apps use one: every load after the first is a hit.
    let directory = FileManager.default.temporaryDirectory.appending(path: "CoreBenchmarks-\(UUID().uuidString)")
    let cachedFile = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json")).cached()
    Benchmark("jsonFile cached(): hit") { benchmark in
        try await cachedFile.save(1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await cachedFile.load())
        }
    }
    Benchmark("jsonFile cached(): hit from @MainActor", configuration: fromMainActor()) { benchmark in
        try await cachedFile.save(1)
        try await loadFromMainActor(cachedFile, benchmark.scaledIterations)
    }
    Benchmark("Five combinators: load from @MainActor", configuration: fromMainActor()) { benchmark in
        try await loadFromMainActor(chained, benchmark.scaledIterations)
    }

    let counter = ValueStore<Void, Int>.inMemory(0)
    Benchmark("inMemory: update") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await counter.update { $0 += 1 })
        }
    }

    // A warm key of a settings file: every load after the first is served from memory.
    let settings = SettingsFile(directory.appending(path: "settings.plist"))
    let theme = settings.store("theme", as: String.self)
    Benchmark("SettingsFile: warm key load") { benchmark in
        try await theme.save("dark")
        _ = try await theme.load()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await theme.load())
        }
    }

    // The strict UserDefaults store against the raw read it wraps, on a suite of its own.
    let suite = "ValueStoreBenchmarks-\(UUID().uuidString)"
    let launches = ValueStore<Void, Int>.userDefaults("launchCount", suiteName: suite)
    Benchmark("userDefaults: load") { benchmark in
        try await launches.save(3)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await launches.load())
        }
        benchmark.stopMeasurement()
        UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
    }
    Benchmark("Floor: UserDefaults.object(forKey:) + cast") { benchmark in
        guard let defaults = UserDefaults(suiteName: suite) else { return }
        defaults.set(3, forKey: "launchCount")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(defaults.object(forKey: "launchCount") as? Int)
        }
        benchmark.stopMeasurement()
        defaults.removePersistentDomain(forName: suite)
    }
    // Its update converts outside the base's update, then writes only if the stored value is
    // unchanged: a load, two conversions and a comparison more than the in-memory update.
    Benchmark("async map: update") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await asyncMapped.update { $0 += 1 })
        }
    }
}
