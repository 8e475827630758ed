import Foundation
import Testing
import ValueStore

// The code shown in Documentation/Settings.md and Documentation/UserDefaults.md, compiled and run.

// The app's keys, as the guide shows them. The tests only build these stores and read their
// labels: they never open the user's real Application Support folder.
extension SettingsFile {
    /// The app's settings, in Application Support.
    static let app = SettingsFile(URL.appData.appending(path: "settings.plist"))
}

extension ValueStore where Environment == Void, Value == String {
    /// The app's theme, `system` until the user picks one.
    static var theme: Self {
        SettingsFile.app.store("theme", as: String.self).default("system")
    }
}

@Suite(.serialized) struct SettingsGuideExamplesTests {
    @Test func manyKeysInOneFile() async throws {
        try await TemporaryDirectory.with { directory in
            let settings = SettingsFile(directory.appending(path: "settings.plist"))
            let theme = settings.store("theme", as: String.self)
            try await theme.save("dark")
            let fontSize = try await settings.store("fontSize", as: Int.self).default(14).load()
            #expect(fontSize == 14)

            try await settings.batch { batch in
                try batch.set("dark", for: "theme")
                try batch.set(16, for: "fontSize")
                batch.remove("legacyFlag")
            }
            #expect(try await settings.store("fontSize", as: Int.self).load() == 16)
        }
    }

    @Test func typeSafeKeys() {
        let theme: ValueStore<Void, String> = .theme
        #expect(theme.label.hasPrefix("key 'theme' in settings "))
        #expect(theme.label.hasSuffix("/settings.plist'"))
    }

    @Test func aDamagedSettingsFileIsReportedAndKept() async throws {
        try await TemporaryDirectory.with { directory in
            let settingsURL = directory.appending(path: "settings.plist")
            try Data("{ not a property list".utf8).write(to: settingsURL)
            let settings = SettingsFile(settingsURL)
            let theme = settings.store("theme", as: String.self)
            await #expect(throws: ValueStoreError.self) { try await theme.save("dark") }
            #expect(try settingsURL.bytes() == Data("{ not a property list".utf8))
            var shownError: ValueStoreError?
            var keptForRecovery: URL?
            do {
                _ = try await theme.load()
            } catch let error as ValueStoreError where error.code == .corrupted {
                shownError = error  // every key reports it; no write touches the file
                keptForRecovery = try await FileQuarantine.moveAside(settingsURL)
            }
            // The catch branch ran: the damaged bytes were kept aside, whole.
            #expect(shownError?.code == .corrupted)
            let kept = try FileQuarantine.files(for: settingsURL)
            #expect(kept.count == 1)
            #expect(keptForRecovery != nil && keptForRecovery == kept.first)
            #expect(try kept.first?.bytes() == Data("{ not a property list".utf8))
            try await theme.save("dark")
            #expect(try await SettingsFile(settingsURL).store("theme", as: String.self).load() == "dark")
        }
    }

    @Test func movingOffUserDefaults() async throws {
        try await TemporaryDirectory.with { directory in
            try await TemporarySuite.with { suite in
                let appGroup = suite.name
                let defaults = suite.defaults
                defaults.set("dark", forKey: "theme")
                defaults.set(16, forKey: "fontSize")
                defaults.set(true, forKey: "likesIceCream")
                defaults.set(3, forKey: "launchCount")
                let settings = SettingsFile(directory.appending(path: "settings.plist"))

                try await settings.importUserDefaults(
                    suiteName: appGroup, keys: ["theme", "fontSize", "likesIceCream"])

                let launches = ValueStore<Void, Int>.jsonFile(directory.appending(path: "launches.json"))
                    .replacing(.userDefaults("launchCount", suiteName: appGroup))
                let theme = settings.store("theme", as: String.self)
                    .replacing(.userDefaults("theme", suiteName: appGroup))

                #expect(try await launches.load() == 3)
                #expect(try await theme.load() == "dark")
                #expect(try await settings.store("likesIceCream", as: Bool.self).load() == true)
                #expect(defaults.object(forKey: "launchCount") == nil)
            }
        }
    }

    @Test func strictUserDefaults() async throws {
        try await TemporarySuite.with { suite in
            let appGroup = suite.name
            let launches = ValueStore<Void, Int>.userDefaults("launchCount", suiteName: appGroup)
            let profile: ValueStore<Void, User> = ValueStore<Void, Data>.userDefaults("profile", suiteName: appGroup)
                .coded(.json)

            try await launches.default(0).update { $0 += 1 }
            try await profile.save(User(name: "Ada"))
            #expect(try await launches.load() == 1)
            #expect(try await profile.load() == User(name: "Ada"))

            suite.defaults.set(1, forKey: "launchCount")
            var failure: ValueStoreError?
            do {
                _ = try await ValueStore<Void, Bool>.userDefaults("launchCount", suiteName: appGroup).load()
            } catch let error as ValueStoreError where error.code == .decodingFailed {
                failure = error  // the stored value is an integer, not Bool
            }
            let error = try #require(failure)
            #expect(error.code == .decodingFailed)
            #expect(error.description.contains("an integer"))
        }
    }
}
