import Benchmark
import Foundation
import ValueStore

// Group commit for single-file stores: saves that arrive while a commit is in flight share the
// next one. 200 saves at once to one jsonFile against 200 saves of it in a row, each awaited
// (target 0.05, as the SettingsFile row's: both encode 200 values); a burst of 1,000
// StoredValue sets until flush() returns against one durable write (target 3). The lone save's
// row, against a raw durable write, is "jsonFile 1 KB: save".

/// How many saves arrive at once.
let burst = 200

func registerCoalescedSaveRows() {
    benchmarkInFreshDirectory(
        "jsonFile 1 KB: 200 concurrent saves", configuration: .fileWork(iterations: 200, seconds: 6)
    ) { directory in
        ValueStore<Void, Settings>.jsonFile(directory.appending(path: "settings.json"))
    } measure: { benchmark, store in
        for iteration in benchmark.scaledIterations {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<burst {
                    var value = Settings.sample
                    value.autosaveInterval = iteration &* burst &+ writer
                    group.addTask { _ = try await store.save(value) }
                }
                try await group.waitForAll()
            }
        }
    }

    benchmarkInFreshDirectory(
        "jsonFile 1 KB: 200 concurrent saves, floor: 200 sequential jsonFile saves",
        configuration: .fileWork(iterations: 50, seconds: 6)
    ) { directory in
        ValueStore<Void, Settings>.jsonFile(directory.appending(path: "settings.json"))
    } measure: { benchmark, store in
        for iteration in benchmark.scaledIterations {
            for writer in 0..<burst {
                var value = Settings.sample
                value.autosaveInterval = iteration &* burst &+ writer
                _ = try await store.save(value)
            }
        }
    }

    benchmarkInFreshDirectory(
        "StoredValue: 1,000 sets, then flush()", configuration: .fileWork(iterations: 1_000, seconds: 4)
    ) { directory in
        await StoredValue.loaded(
            ValueStore<Void, Settings>.jsonFile(directory.appending(path: "settings.json")), default: .sample)
    } measure: { benchmark, stored in
        for _ in benchmark.scaledIterations {
            try await setThousandTimesAndFlush(stored)
        }
    }

    benchmarkInFreshDirectory(
        "StoredValue: 1,000 sets, then flush(), floor: 1 durable write",
        configuration: .fileWork(iterations: 1_000, seconds: 4)
    ) { directory in
        RawFile(directory.appending(path: "settings.json"))
    } measure: { benchmark, file in
        for _ in benchmark.scaledIterations {
            try file.replace(with: JSONEncoder().encode(Settings.sample))
        }
    }
}

/// A slider's drag: 1,000 values set in one main-actor turn, then the wait until they are durable.
@MainActor
func setThousandTimesAndFlush(_ stored: StoredValue<Settings>) async throws {
    for step in 0..<1_000 {
        stored.value.autosaveInterval = step
    }
    try await stored.flush()
}
