import Benchmark
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

    let cached = ValueStore<Void, Int>.inMemory(1).cached()
    Benchmark("cached(): hit") { benchmark in
        _ = try await cached.load()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await cached.load())
        }
    }

    let counter = ValueStore<Void, Int>.inMemory(0)
    Benchmark("inMemory: update") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await counter.update { $0 += 1 })
        }
    }
}
