import Benchmark
import Foundation
import ValueStore

// The durable file stores against what their work costs when written with bare system calls:
// each store row is judged against the floor of the same format and size, measured in the same
// run (see targets.txt). A floor is named after its row so that the two sort, and run, one right
// after the other: the machine's speed drifts over minutes. Every benchmark works in a fresh
// directory of its own.

extension Benchmark.Configuration {
    /// Each sample is one operation: file work takes microseconds to tens of milliseconds.
    ///
    /// 1 KB saves take about half a millisecond, mostly two syncs, and stop at `iterations`;
    /// 600 KB rows take tens of milliseconds and stop at `seconds`. The whole target runs in
    /// about two minutes.
    static func fileWork(iterations: Int, seconds: Int) -> Self {
        Self(metrics: [.wallClock], warmupIterations: 3, maxDuration: .seconds(seconds), maxIterations: iterations)
    }

    /// Saves of the 1 KB value, the comparison rows included.
    static var smallSaves: Self { fileWork(iterations: 4_000, seconds: 4) }

    /// Loads of the 1 KB value: tens of microseconds each.
    static var smallLoads: Self { fileWork(iterations: 10_000, seconds: 2) }

    /// Saves and loads of the 600 KB value.
    static var largeValue: Self { fileWork(iterations: 1_000, seconds: 6) }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .smallSaves

    for format in [Format<Settings>.json, .plist] {
        registerRows(format, value: Settings.sample, size: "1 KB", saves: .smallSaves, loads: .smallLoads)
    }
    for format in [Format<Library>.json, .plist] {
        registerRows(format, value: Library.sample, size: "600 KB", saves: .largeValue, loads: .largeValue)
    }
    registerDegradedHitRow()
    registerInstrumentedRows()
    registerUpdateRows()
    registerVersionedRows()
    registerComparisons()
    registerSettingsRows()
    registerSyncRows()
    registerSyncScaleRows()
    registerCoalescedSaveRows()
    registerEncryptedRows(Settings.sample, size: "1 KB", saves: .smallSaves, loads: .smallLoads)
    registerEncryptedRows(Library.megabyte, size: "1 MB", saves: .largeValue, loads: .largeValue)
    registerUnchangedEncryptedFileRows(Credential.sample, size: "credential", configuration: .smallLoads)
    registerChangedEncryptedFileRows(Credential.sample, size: "credential", configuration: .smallLoads)
    registerDecryptionAloneRows(Credential.sample, size: "credential", configuration: .smallLoads)
    registerDecryptionAloneRows(Settings.sample, size: "1 KB", configuration: .smallLoads)
}

/// The floors and the store rows for one format and one value.
func registerRows<Value: Codable & Sendable & Equatable>(
    _ format: Format<Value>,
    value: Value,
    size: String,
    saves: Benchmark.Configuration,
    loads: Benchmark.Configuration
) {
    benchmarkInFreshDirectory("\(format.storeName) \(size): save, floor: raw durable write", configuration: saves) {
        directory in
        RawFile(directory.appending(path: format.fileName))
    } measure: { benchmark, file in
        for _ in benchmark.scaledIterations {
            try file.replace(with: format.encode(value))
        }
    }

    benchmarkInFreshDirectory("\(format.storeName) \(size): load, floor: raw read + decode", configuration: loads) {
        directory in
        let file = RawFile(directory.appending(path: format.fileName))
        try file.replace(with: format.encode(value))
        try expect(format.decode(file.contents()) == value, "the floor reads back the value it wrote")
        return file
    } measure: { benchmark, file in
        for _ in benchmark.scaledIterations {
            blackHole(try format.decode(file.contents()))
        }
    }

    benchmarkInFreshDirectory("\(format.storeName) \(size): save", configuration: saves) { directory in
        format.store(directory.appending(path: format.fileName))
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.save(value))
        }
    }

    benchmarkInFreshDirectory("\(format.storeName) \(size): load", configuration: loads) { directory in
        let url = directory.appending(path: format.fileName)
        let store = format.store(url)
        try await store.save(value)
        // The store writes what the floor writes and reads, so both do the same work. Compare
        // sizes, not bytes: JSONEncoder on Linux orders keys differently from one encode to the next.
        try expect(Data(contentsOf: url).count == format.encode(value).count, "the store writes the floor's bytes")
        try expect(format.decode(Data(contentsOf: url)) == value, "the store's file holds the value")
        try expect(await store.load() == value, "the store reads back the value it wrote")
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    }
}

/// An uncontended `update` of the 1 KB JSON value against the same read-change-write done by
/// hand under a `flock`: the store runs its body with no lock held, then locks, checks that the
/// file is still what it read, and writes.
func registerUpdateRows() {
    let format = Format<Settings>.json
    benchmarkInFreshDirectory(
        "jsonFile 1 KB: update, floor: flock + read + decode + durable write", configuration: .smallSaves
    ) {
        directory in
        let file = RawFile(directory.appending(path: format.fileName))
        try file.replace(with: format.encode(Settings.sample))
        return file
    } measure: { benchmark, file in
        for _ in benchmark.scaledIterations {
            try file.update { bytes in
                var settings = try format.decode(bytes)
                settings.autosaveInterval += 1
                return try format.encode(settings)
            }
        }
    }

    benchmarkInFreshDirectory("jsonFile 1 KB: update", configuration: .smallSaves) { directory in
        let store = format.store(directory.appending(path: format.fileName))
        try await store.save(Settings.sample)
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.update { $0.autosaveInterval += 1 })
        }
    }
}

/// What apps often use instead, for information: no target.
func registerComparisons() {
    let json = Format<Settings>.json
    benchmarkInFreshDirectory("Data.write(.atomic) JSON 1 KB", configuration: .smallSaves) { directory in
        directory.appending(path: "settings.json")
    } measure: { benchmark, url in
        for _ in benchmark.scaledIterations {
            try json.encode(Settings.sample).write(to: url, options: .atomic)
        }
    }

    let largeJSON = Format<Library>.json
    benchmarkInFreshDirectory("Data.write(.atomic) JSON 600 KB", configuration: .largeValue) { directory in
        directory.appending(path: "library.json")
    } measure: { benchmark, url in
        for _ in benchmark.scaledIterations {
            try largeJSON.encode(Library.sample).write(to: url, options: .atomic)
        }
    }

    // UserDefaults chooses its own file (on Linux, ~/.config/<suite>.plist), so the suite gets a
    // name of its own and its domain is removed afterwards. It skips the write when a key is set
    // to the data it already holds, so the benchmark alternates between two values of one size.
    let suite = "ValueStoreBenchmarks-\(UUID().uuidString)"
    var other = Settings.sample
    other.autosaveInterval = 60
    let values = [Settings.sample, other]
    Benchmark(
        "UserDefaults JSON 1 KB: set + synchronize",
        configuration: .smallSaves,
        closure: { (benchmark: Benchmark, defaults: UserDefaults) in
            for index in benchmark.scaledIterations {
                defaults.set(try json.encode(values[index % 2]), forKey: "settings")
                try expect(defaults.synchronize(), "UserDefaults synchronizes")
            }
        },
        setup: {
            guard let defaults = UserDefaults(suiteName: suite) else {
                throw BenchmarkSetupFailed(reason: "UserDefaults(suiteName: \"\(suite)\") returned nil")
            }
            return defaults
        },
        teardown: {
            guard let defaults = UserDefaults(suiteName: suite) else { return }
            defaults.removePersistentDomain(forName: suite)
            try expect(defaults.synchronize(), "UserDefaults removes the suite")
        }
    )
}

/// Registers a benchmark that works in a fresh directory under the temporary directory:
/// `prepare` receives the directory before measuring starts, and the directory is removed when
/// the benchmark ends.
func benchmarkInFreshDirectory<State>(
    _ name: String,
    configuration: Benchmark.Configuration,
    prepare: @escaping (_ directory: URL) async throws -> State,
    measure: @escaping (_ benchmark: Benchmark, _ state: State) async throws -> Void
) {
    // Only named here: each benchmark runs in a process of its own, which creates just its own.
    let directory = FileManager.default.temporaryDirectory
        .appending(path: "ValueStoreBenchmarks-\(UUID().uuidString)", directoryHint: .isDirectory)
    Benchmark(
        name,
        configuration: configuration,
        closure: measure,
        setup: {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            do {
                return try await prepare(directory)
            } catch {
                // The framework skips the teardown when the setup fails.
                try FileManager.default.removeItem(at: directory)
                throw error
            }
        },
        teardown: {
            try FileManager.default.removeItem(at: directory)
        }
    )
}

/// A benchmark that could not start, or whose floor and store would not do the same work.
struct BenchmarkSetupFailed: Error, CustomStringConvertible {
    var reason: String

    var description: String { "benchmark setup failed: \(reason)" }
}

/// Throws unless `condition` holds; `expectation` says what should have been true.
func expect(_ condition: Bool, _ expectation: String) throws {
    guard condition else { throw BenchmarkSetupFailed(reason: "expected that \(expectation)") }
}
