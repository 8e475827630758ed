import Foundation
import Testing
import ValueStore

// The code shown in Documentation/Settings.md and Documentation/UserDefaults.md, compiled and run.

extension SettingsFile {
    /// The app's settings, in Application Support.
    static let app = SettingsFile(URL.appData.appending(path: "ValueStoreTests-settings.plist"))
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

    @Test func typeSafeKeys() async throws {
        let current = try await ValueStore.theme.load()
        #expect(current == "system" || current == "dark")
        try await ValueStore.theme.save("dark")
        #expect(try await ValueStore.theme.load() == "dark")
        try await ValueStore<Void, String>.theme.remove()
    }

    @Test func aDamagedSettingsFileIsReportedAndKept() async throws {
        try await TemporaryDirectory.with { directory in
            let settingsURL = directory.appending(path: "settings.plist")
            try Data("{ not a property list".utf8).write(to: settingsURL)
            let settings = SettingsFile(settingsURL)
            let theme = settings.store("theme", as: String.self)
            do {
                _ = try await theme.load()
            } catch let error as ValueStoreError where error.code == .corrupted {
                print(error)  // every key reports it; no write touches the file
                let aside = try await FileQuarantine.moveAside(settingsURL)
                print("Kept the damaged settings at \(aside.path)")
            }
            try await theme.save("dark")
            #expect(try await SettingsFile(settingsURL).store("theme", as: String.self).load() == "dark")
        }
    }

    @Test func movingOffUserDefaults() async throws {
        try await TemporaryDirectory.with { directory in
            let standard = UserDefaults.standard
            defer {
                for key in ["theme", "fontSize", "likesIceCream", "launchCount"] { standard.removeObject(forKey: key) }
            }
            standard.set("dark", forKey: "theme")
            standard.set(16, forKey: "fontSize")
            standard.set(true, forKey: "likesIceCream")
            standard.set(3, forKey: "launchCount")
            let settings = SettingsFile(directory.appending(path: "settings.plist"))

            try await settings.importUserDefaults(suiteName: nil, keys: ["theme", "fontSize", "likesIceCream"])

            let launches = ValueStore<Void, Int>.jsonFile(directory.appending(path: "launches.json"))
                .replacing(.userDefaults("launchCount"))
            let theme = settings.store("theme", as: String.self).replacing(.userDefaults("theme"))

            #expect(try await launches.load() == 3)
            #expect(try await theme.load() == "dark")
            #expect(try await settings.store("likesIceCream", as: Bool.self).load() == true)
            #expect(standard.object(forKey: "launchCount") == nil)
        }
    }

    @Test func strictUserDefaults() async throws {
        defer {
            UserDefaults.standard.removeObject(forKey: "launchCount")
            UserDefaults(suiteName: "group.example")?.removeObject(forKey: "profile")
        }
        let launches = ValueStore<Void, Int>.userDefaults("launchCount")
        let profile: ValueStore<Void, User> = ValueStore<Void, Data>.userDefaults("profile", suiteName: "group.example")
            .coded(.json)

        try await launches.default(0).update { $0 += 1 }
        try await profile.save(User(name: "Ada"))
        #expect(try await launches.load() == 1)
        #expect(try await profile.load() == User(name: "Ada"))

        UserDefaults.standard.set(1, forKey: "launchCount")
        do {
            _ = try await ValueStore<Void, Bool>.userDefaults("launchCount").load()
        } catch let error as ValueStoreError where error.code == .decodingFailed {
            print(error)  // the stored value is an integer, not Bool
        }
    }
}
