import Foundation
import ValueStore

/// The scenario `swift run ValueStoreDemo` plays, one step a function.
struct Demo {
    let directory: URL
    let vault = KeyVault()
    let persistence: Persistence

    init(directory: URL) {
        self.directory = directory
        persistence = .live(directory: directory, vault: vault)
    }

    func run() async throws {
        try await launch()
        try await migrate()
        try await saveAndReload()
        try await updateConcurrently()
        try await reportDamage()
        try await keepASecret()
        try await keepManySettings()
        try await versionThePayload()
        try await watchAnotherProcess()
        try await syncTwoDevices()
        try await useMocks()
    }

    /// A file store survives restarts: the count goes up with every run on the same directory.
    func launch() async throws {
        step("Launch")
        let launches = try await persistence.launchCount.update { $0 += 1 }
        if launches == 1 {
            say("First launch: launch-count.json did not exist, so `default(0)` started the count.")
        } else {
            say("Launch number \(launches): read what earlier runs saved in launch-count.json.")
        }
    }

    /// `replacing` moves the legacy preferences into the new settings file, once.
    func migrate() async throws {
        step("Migration with `replacing`")
        let settingsFile = directory.appending(path: "settings.json")
        if !FileManager.default.fileExists(atPath: settingsFile.path(percentEncoded: false)) {
            try await persistence.legacyPreferences.save(LegacyPreferences(darkMode: true, textSize: 17))
            say("Version 1 of the app left preferences.plist (dark mode, text size 17).")
        }
        let settings = try await persistence.settings.load()
        say("Loaded settings: theme \(settings.theme), font size \(settings.fontSize).")
        let legacyLeft = try await persistence.legacyPreferences.optional().load() != nil
        say(
            legacyLeft
                ? "preferences.plist is still there."
                : "preferences.plist is gone: the value lives in settings.json now.")
    }

    /// Saved values come back, also through a store created afresh (as after a restart).
    func saveAndReload() async throws {
        step("Save and reload")
        var settings = try await persistence.settings.load()
        settings.fontSize += 1
        try await persistence.settings.save(settings)
        let reloaded = try await Persistence.live(directory: directory, vault: vault).settings.load()
        say("Saved font size \(settings.fontSize); a fresh store reads \(reloaded.fontSize) from settings.json.")
    }

    /// `update` is atomic: concurrent updates never lose one another's changes.
    func updateConcurrently() async throws {
        step("Atomic update")
        let settings = persistence.settings
        let before = try await settings.load().recentSearches.count
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...50 {
                group.addTask {
                    try await settings.update { $0.recentSearches.append("search \(index)") }
                }
            }
            try await group.waitForAll()
        }
        let after = try await settings.load().recentSearches.count
        say("50 tasks each appended a search at the same time: \(before) became \(after).")
        try await settings.update { $0.recentSearches.removeAll() }
    }

    /// Damaged data is reported clearly, never hidden by a default, and never deleted.
    func reportDamage() async throws {
        step("A damaged file")
        let url = directory.appending(path: "damaged-settings.json")
        try Data(#"{"theme": "dark", "fontSi"#.utf8).write(to: url)
        let store = ValueStore<Void, Settings>.jsonFile(url).default(.standard)
        do {
            _ = try await store.load()
            say("Unexpectedly loaded damaged data.")
        } catch let error as ValueStoreError {
            say("Loading a truncated file, even with a default, fails with `\(error.code)`:")
            say("  \(error)")
            let aside = try await FileQuarantine.moveAside(url)
            say("The app moved it aside for recovery: \(aside.lastPathComponent).")
            say("Now the default applies: theme \(try await store.load().theme).")
        }
    }

    /// A credential kept encrypted, with its key in a separate file, behind a lockable vault.
    func keepASecret() async throws {
        step("An encrypted credential")
        let keyFile = directory.appending(path: "keys/credential.key")
        vault.unlock(with: try await EncryptionKey.loadOrCreate(at: keyFile))
        say("The key lives in keys/credential.key (mode 0600), apart from the data in secure/.")

        let credential = Credential(account: "ada@example.com", password: "correct horse battery staple")
        try await persistence.credential.save(credential)
        let file = directory.appending(path: "secure/credential.enc")
        let bytes = try Data(contentsOf: file)
        say("Saved it; secure/credential.enc holds \(bytes.count) bytes and begins:")
        say("  " + bytes.prefix(24).map { String(format: "%02x", $0) }.joined(separator: " ") + " …")
        let leaks = bytes.range(of: Data(credential.password.utf8)) != nil || bytes.range(of: Data("ada".utf8)) != nil
        say(
            leaks
                ? "The password is readable in the file!" : "Neither the account nor the password appears in the file.")
        say("Loaded back with the key: \(try await persistence.credential.load().account).")

        do {
            _ = try await ValueStore<Void, Credential>.encryptedFile(file, key: .random()).load()
        } catch let error as ValueStoreError {
            say("Loading with another key fails with `\(error.code)`:")
            say("  \(error)")
        }

        vault.lock()
        do {
            _ = try await persistence.credential.default(Credential(account: "guest", password: "")).load()
        } catch let error as ValueStoreError {
            say("With the vault locked, even a store with a default fails with `\(error.code)`:")
            say("  \(error)")
        }
    }

    /// A versioned file: the new app migrates what the old app wrote, and the old app, meeting the
    /// newer file, refuses to overwrite it.
    func versionThePayload() async throws {
        step("Versioned payloads")
        let url = directory.appending(path: "profile.json")
        let oldApp = ValueStore<Void, Data>.file(url).versioned(ProfileV1.self)
        let newApp = ValueStore<Void, Data>.file(url).versioned(Profile.self)
        try await ValueStore<Void, Data>.file(url).remove()
        try await oldApp.save(ProfileV1(name: "Ada Lovelace"))
        say("The old app saved profile.json: \(String(decoding: try Data(contentsOf: url), as: UTF8.self))")

        let profile = try await newApp.load()
        say("The new app loads it, migrated in memory: first \(profile.first), last \(profile.last).")
        try await newApp.save(profile)
        say("Its next save stores schema 2: \(String(decoding: try Data(contentsOf: url), as: UTF8.self))")

        do {
            try await oldApp.save(ProfileV1(name: "Ada King"))
            say("Unexpectedly, the old app overwrote the newer file.")
        } catch let error as ValueStoreError where error.code == .newerVersion {
            say("The old app, started again, tries to save and is refused with `\(error.code)`:")
            say("  \(error)")
            say("profile.json still holds schema 2, first name \(try await newApp.load().first).")
        }
    }

    /// `changes()` delivers a write made by another process: the demo starts itself again as a
    /// second process that saves the settings file, and the change arrives here.
    func watchAnotherProcess() async throws {
        step("Changes from another process")
        let settingsFile = directory.appending(path: "settings.json")
        let settings = ValueStore<Void, Settings>.jsonFile(settingsFile).default(.standard)
        var states = settings.changes().makeAsyncIterator()
        if case .value(let current)? = await states.next() {
            say("Watching settings.json; the theme is \(current.theme).")
        }
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        writer.arguments = ["--set-theme", "sepia", settingsFile.path(percentEncoded: false)]
        try writer.run()
        say("Started a second process (pid \(writer.processIdentifier)) that saves theme \"sepia\".")
        while let state = await states.next() {
            switch state {
            case .value(let changed) where changed.theme == "sepia":
                say("The change arrived through changes(): the theme is now \(changed.theme).")
            case .value, .absent:
                continue
            case .failed(let error):
                say("The file could not be read: \(error)")
            }
            break
        }
        writer.waitUntilExit()
    }

    /// The same code runs against in-memory stores in tests and previews.
    func useMocks() async throws {
        step("Mocks")
        let mock = Persistence.mock
        try await mock.settings.update { $0.theme = "preview" }
        say(
            "Persistence.mock keeps everything in memory: theme \(try await mock.settings.load().theme), no file written."
        )
    }

    func step(_ title: String) {
        print("\n== \(title)")
    }

    func say(_ line: String) {
        print("   \(line)")
    }
}
