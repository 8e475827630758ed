import Foundation
import ValueStore

/// Every value the app persists, one typed store each: the app uses `live`, tests and previews
/// use `mock`.
struct Persistence: Sendable {
    var launchCount: ValueStore<Void, Int>
    var settings: ValueStore<Void, Settings>
    var legacyPreferences: ValueStore<Void, LegacyPreferences>
}

extension Persistence {
    /// Real files under `directory`.
    static func live(directory: URL) -> Self {
        Self(
            launchCount: .launchCount(in: directory),
            settings: .settings(in: directory),
            legacyPreferences: .legacyPreferences(in: directory)
        )
    }

    /// In-memory stores, for tests and previews: nothing touches the disk.
    static var mock: Self {
        Self(
            launchCount: ValueStore<Void, Int>.inMemory().default(0),
            settings: .inMemory(.standard),
            legacyPreferences: .inMemory()
        )
    }
}

// Type-safe keys: each store is a static constructor, so its type and its file name live in one
// place and the compiler rejects a wrong type.

extension ValueStore where Environment == Void, Value == Int {
    /// How many times the app started: a JSON file, counting from zero.
    static func launchCount(in directory: URL) -> Self {
        ValueStore<Void, Int>.jsonFile(directory.appending(path: "launch-count.json")).default(0)
    }
}

extension ValueStore where Environment == Void, Value == Settings {
    /// The settings, in JSON; moved over from the legacy property list the first time.
    static func settings(in directory: URL) -> Self {
        let legacy = ValueStore<Void, LegacyPreferences>.legacyPreferences(in: directory)
            .map(load: \.settings, save: { LegacyPreferences(darkMode: $0.theme == "dark", textSize: $0.fontSize) })
        return ValueStore<Void, Settings>.jsonFile(directory.appending(path: "settings.json"))
            .replacing(legacy)
    }
}

extension ValueStore where Environment == Void, Value == LegacyPreferences {
    /// Where version 1 of the app kept its preferences.
    static func legacyPreferences(in directory: URL) -> Self {
        .plistFile(directory.appending(path: "preferences.plist"))
    }
}
