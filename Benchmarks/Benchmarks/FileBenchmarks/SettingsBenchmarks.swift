import Benchmark
import Foundation
import ValueStore

// Group commit against one durable save per write: 200 writers at once to a settings file, each
// to a key of its own, against 200 durable saves of one value in a row. The settings file should
// win by 20 times or more. For information, the same 200 writes done TinyStorage's way: the whole
// dictionary written atomically for each write, without fsync.

/// How many writers each sample runs.
let writers = 200

// A commit costs O(file): one key's save in a file of 10,000 keys of 1 KB each (10 MB) encodes
// and writes all of it. Against the floor of that work done by hand: Foundation's binary
// property-list encoding of the same dictionary and a durable write of the result.

/// How many keys the large settings file holds.
let largeFileKeys = 10_000

/// The large file's value of key `index`: 1 KB, different for each key.
func largeFileValue(_ index: Int) -> String {
    String(repeating: "\(index % 10)", count: 1_000)
}

func registerSettingsRows() {
    benchmarkInFreshDirectory(
        "SettingsFile: 200 concurrent saves", configuration: .fileWork(iterations: 200, seconds: 6)
    ) {
        directory in
        SettingsFile(directory.appending(path: "settings.plist"))
    } measure: { benchmark, settings in
        for iteration in benchmark.scaledIterations {
            try await saveConcurrently(iteration, to: settings)
        }
    }

    benchmarkInFreshDirectory(
        "SettingsFile: 200 concurrent saves, floor: 200 sequential jsonFile saves",
        configuration: .fileWork(iterations: 50, seconds: 6)
    ) { directory in
        ValueStore<Void, Int>.jsonFile(directory.appending(path: "value.json"))
    } measure: { benchmark, store in
        for iteration in benchmark.scaledIterations {
            for writer in 0..<writers {
                try await store.save(iteration &* writers &+ writer)
            }
        }
    }

    benchmarkInFreshDirectory(
        "TinyStorage's way: 200 saves, one atomic write each, no fsync",
        configuration: .fileWork(iterations: 200, seconds: 6)
    ) { directory in
        directory.appending(path: "settings.plist")
    } measure: { benchmark, url in
        var entries: [String: Any] = [:]
        for iteration in benchmark.scaledIterations {
            for writer in 0..<writers {
                entries["key\(writer)"] = iteration
                let data = try PropertyListSerialization.data(fromPropertyList: entries, format: .xml, options: 0)
                try data.write(to: url, options: .atomic)
            }
        }
    }

    benchmarkInFreshDirectory(
        "SettingsFile: one key's save in a 10,000-key file", configuration: .fileWork(iterations: 100, seconds: 10)
    ) { directory in
        let settings = SettingsFile(directory.appending(path: "settings.plist"))
        try await settings.batch { batch in
            for index in 0..<largeFileKeys {
                try batch.set(largeFileValue(index), for: "key\(index)")
            }
        }
        return settings.store("key0", as: String.self)
    } measure: { benchmark, key in
        for iteration in benchmark.scaledIterations {
            // Never the value the file holds, which would write nothing.
            try await key.save(largeFileValue(iteration) + UUID().uuidString)
        }
    }

    benchmarkInFreshDirectory(
        "SettingsFile: one key's save in a 10,000-key file, floor: serialize + durable write",
        configuration: .fileWork(iterations: 100, seconds: 10)
    ) { directory in
        var entries: [String: String] = [:]
        for index in 0..<largeFileKeys {
            entries["key\(index)"] = largeFileValue(index)
        }
        return (RawFile(directory.appending(path: "settings.plist")), entries)
    } measure: { benchmark, state in
        var (file, entries) = state
        for iteration in benchmark.scaledIterations {
            entries["key0"] = largeFileValue(iteration) + UUID().uuidString
            try file.replace(
                with: PropertyListSerialization.data(fromPropertyList: entries, format: .binary, options: 0))
        }
    }

    benchmarkInFreshDirectory(
        "SettingsFile, relaxed: 200 concurrent saves", configuration: .fileWork(iterations: 200, seconds: 6)
    ) { directory in
        SettingsFile(directory.appending(path: "settings.plist"), options: .cache)
    } measure: { benchmark, settings in
        for iteration in benchmark.scaledIterations {
            try await saveConcurrently(iteration, to: settings)
        }
    }
}

/// Saves `value` to each writer's own key of `settings`, all at once, and waits for every save.
func saveConcurrently(_ value: Int, to settings: SettingsFile) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask { try await settings.store("key\(writer)", as: Int.self).save(value) }
        }
        try await group.waitForAll()
    }
}
