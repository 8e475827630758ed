import Benchmark
import Foundation
import ValueStore

// A versioned JSON file against the plain `jsonFile` store of the same value, measured in the
// same run: loading the current version, and loading one version older, which migrates it. The
// rows are named after the `jsonFile` load they are judged against, so that they run right after
// it.

/// The settings as schema 1 stored them, before `showsLineNumbers` existed.
struct SettingsV1: VersionedValue, Equatable {
    static let version = 1
    var theme: String
    var accentColor: String
    var fontSize: Double
    var autosaveInterval: Int
    var lastOpened: Date
    var recentDocuments: [String]

    static let sample = SettingsV1(
        theme: Settings.sample.theme,
        accentColor: Settings.sample.accentColor,
        fontSize: Settings.sample.fontSize,
        autosaveInterval: Settings.sample.autosaveInterval,
        lastOpened: Settings.sample.lastOpened,
        recentDocuments: Settings.sample.recentDocuments
    )
}

extension Settings: VersionedValue {
    static let version = 2
    typealias PreviousVersion = SettingsV1

    init(migrating old: SettingsV1) {
        self.init(
            theme: old.theme,
            accentColor: old.accentColor,
            fontSize: old.fontSize,
            showsLineNumbers: true,
            autosaveInterval: old.autosaveInterval,
            lastOpened: old.lastOpened,
            recentDocuments: old.recentDocuments
        )
    }
}

extension Library: VersionedValue {
    static let version = 1
}

func registerVersionedRows() {
    registerVersionedLoad(
        "jsonFile 1 KB: load, versioned", stored: Settings.sample, expected: Settings.sample, loads: .smallLoads)
    registerVersionedLoad(
        "jsonFile 1 KB: load, versioned, one migration", stored: SettingsV1.sample, expected: Settings.sample,
        loads: .smallLoads)
    registerVersionedLoad(
        "jsonFile 600 KB: load, versioned", stored: Library.sample, expected: Library.sample, loads: .largeValue)
}

/// A load of `Current` from a file that holds `stored` in its version's envelope.
func registerVersionedLoad<Stored: VersionedValue, Current: VersionedValue & Equatable>(
    _ name: String,
    stored: Stored,
    expected: Current,
    loads: Benchmark.Configuration
) {
    benchmarkInFreshDirectory(name, configuration: loads) { directory in
        let url = directory.appending(path: "value.json")
        let file = ValueStore<Void, Data>.file(url)
        try await file.save(
            Data(#"{"version":\#(Stored.version),"value":"#.utf8) + JSONEncoder().encode(stored) + Data("}".utf8))
        let store = file.versioned(Current.self)
        try expect(await store.load() == expected, "the versioned store reads the value")
        return store
    } measure: { benchmark, store in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.load())
        }
    }
}
