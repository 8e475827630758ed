import Foundation
import ValueStore

/// Every value the app persists, one typed store each: the app uses `live`, tests and previews
/// use `mock`.
struct Persistence: Sendable {
    var launchCount: ValueStore<Void, Int>
    var settings: ValueStore<Void, Settings>
    var legacyPreferences: ValueStore<Void, LegacyPreferences>
    var credential: ValueStore<Void, Credential>
}

extension Persistence {
    /// Real files under `directory`; the credential is encrypted with keys from `vault`, and
    /// reads and writes fail with `locked` until the app unlocks it.
    static func live(directory: URL, vault: KeyVault) -> Self {
        Self(
            launchCount: .launchCount(in: directory),
            settings: .settings(in: directory),
            legacyPreferences: .legacyPreferences(in: directory),
            credential: .credential(in: directory, vault: vault)
        )
    }

    /// In-memory stores, for tests and previews: nothing touches the disk.
    static var mock: Self {
        Self(
            launchCount: ValueStore<Void, Int>.inMemory().default(0),
            settings: .inMemory(.standard),
            legacyPreferences: .inMemory(),
            credential: .inMemory()
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

extension ValueStore where Environment == Void, Value == Credential {
    /// The sign-in, encrypted; the key lives elsewhere (see `Demo.unlock`).
    static func credential(in directory: URL, vault: KeyVault) -> Self {
        .encryptedFile(directory.appending(path: "secure/credential.enc"), vault: vault)
    }
}
