import Foundation
import ValueStore

extension Demo {
    /// Many small settings in one durable file: keys, a batch, an import from UserDefaults, and a
    /// damaged file that is reported, not erased.
    func keepManySettings() async throws {
        step("Many settings in one file")
        let url = directory.appending(path: "app-settings.plist")
        let settings = SettingsFile(url)
        try await settings.store("theme", as: String.self).save("dark")
        try await settings.batch { batch in
            try batch.set(16, for: "fontSize")
            try batch.set(["Inbox", "Archive"], for: "recentFolders")
            batch.remove("legacyFlag")
        }
        let fontSize = try await settings.store("fontSize", as: Int.self).load()
        say("Saved a theme and, in one durable batch, a font size (\(fontSize)) and recent folders.")

        let suiteName = "ValueStoreDemo.\(UUID().uuidString.prefix(8))"
        let defaults = UserDefaults(suiteName: suiteName)
        defaults?.set(true, forKey: "likesIceCream")
        defaults?.set(3, forKey: "launchesBeforeReview")
        let imported = try await settings.importUserDefaults(
            suiteName: suiteName, keys: ["likesIceCream", "launchesBeforeReview", "theme"])
        let likesIceCream = try await settings.store("likesIceCream", as: Bool.self).load()
        say("Imported \(imported.joined(separator: " and ")) from UserDefaults in one commit;")
        say("  likesIceCream is still a Bool (\(likesIceCream)), and the imported keys left UserDefaults.")
        UserDefaults().removePersistentDomain(forName: suiteName)

        let damagedURL = directory.appending(path: "damaged-settings.plist")
        let damaged = Data("<plist><dict><key>theme</key><string>da".utf8)
        try damaged.write(to: damagedURL)
        let damagedSettings = SettingsFile(damagedURL)
        do {
            try await damagedSettings.store("theme", as: String.self).save("light")
            say("Unexpectedly wrote over a damaged settings file.")
        } catch let error as ValueStoreError {
            let untouched = try Data(contentsOf: damagedURL) == damaged
            say("A damaged settings file refuses every key with `\(error.code)`, and a save writes nothing:")
            say("  \(error)")
            say("  its bytes are \(untouched ? "untouched" : "CHANGED"), ready for FileQuarantine.moveAside.")
        }
    }
}
