import Foundation
import Testing

@testable import ValueStore

@Suite struct SettingsImportTests {
    @Test func importKeepsEachTypeAndRemovesOnlyWhatItImported() async throws {
        try await TemporarySuite.with { suite in
            try await TemporaryDirectory.with { directory in
                let defaults = suite.defaults
                defaults.set(true, forKey: "likesIceCream")
                defaults.set(16, forKey: "fontSize")
                defaults.set(1.5, forKey: "ratio")
                defaults.set("dark", forKey: "theme")
                defaults.set(["a", "b"], forKey: "recent")
                defaults.set("kept in defaults", forKey: "notListed")
                let url = directory.appending(path: "settings.plist")
                let settings = SettingsFile(url)
                try await settings.store("theme", as: String.self).save("light")  // already in the file
                let imported = try await settings.importUserDefaults(
                    suiteName: suite.name, keys: ["theme", "fontSize", "likesIceCream", "ratio", "recent", "missing"])
                #expect(imported == ["fontSize", "likesIceCream", "ratio", "recent"])
                #expect(try await settings.store("likesIceCream", as: Bool.self).load() == true)
                #expect(try await settings.store("fontSize", as: Int.self).load() == 16)
                #expect(try await settings.store("ratio", as: Double.self).load() == 1.5)
                #expect(try await settings.store("recent", as: [String].self).load() == ["a", "b"])
                #expect(try await settings.store("theme", as: String.self).load() == "light", "the file's key wins")
                let nodes = try SettingsFileTests.nodes(at: url)
                #expect(nodes["likesIceCream"] == .boolean(true), "a Bool stays a Bool, with no list of Boolean keys")
                #expect(nodes["fontSize"] == .integer(16))
                let reread = suite.defaults
                #expect(reread.object(forKey: "fontSize") == nil && reread.object(forKey: "likesIceCream") == nil)
                #expect(reread.string(forKey: "theme") == "dark", "skipped keys stay where they were")
                #expect(reread.string(forKey: "notListed") == "kept in defaults")
                #expect(try await settings.importUserDefaults(suiteName: suite.name, keys: ["fontSize"]) == [])
            }
        }
    }

    @Test func anImportedDateKeepsItsFractionalSeconds() async throws {
        try await TemporarySuite.with { suite in
            try await TemporaryDirectory.with { directory in
                let when = Date(timeIntervalSinceReferenceDate: 785_000_123.456_789)
                #if canImport(Darwin)
                suite.defaults.set(when, forKey: "lastSync")
                #else
                // Foundation on Linux writes a suite as XML, whose dates hold whole seconds, whenever
                // any suite in the process synchronizes; a suite read from a binary file keeps the
                // fraction, as UserDefaults does on Apple platforms.
                try PropertyListSerialization.data(fromPropertyList: ["lastSync": when], format: .binary, options: 0)
                    .write(to: URL(fileURLWithPath: suite.name + ".plist"))
                #endif
                let url = directory.appending(path: "settings.plist")
                let imported = try await SettingsFile(url).importUserDefaults(suiteName: suite.name, keys: ["lastSync"])
                #expect(imported == ["lastSync"])
                let loaded = try await SettingsFile(url).store("lastSync", as: Date.self).load()
                #expect(loaded == when)
            }
        }
    }

    @Test func aDamagedFileImportsNothingAndRemovesNothing() async throws {
        try await TemporarySuite.with { suite in
            try await TemporaryDirectory.with { directory in
                suite.defaults.set(16, forKey: "fontSize")
                let url = directory.appending(path: "settings.plist")
                try Data("garbage".utf8).write(to: url)
                await #expect(throws: ValueStoreError(.corrupted)) {
                    try await SettingsFile(url).importUserDefaults(suiteName: suite.name, keys: ["fontSize"])
                }
                #expect(suite.defaults.integer(forKey: "fontSize") == 16)
                #expect(try Data(contentsOf: url) == Data("garbage".utf8))
            }
        }
    }
}
