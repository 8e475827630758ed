import Foundation
import Testing

@testable import ValueStore

// The code shown in Documentation/Observation.md, compiled and run here.

extension ValueStore where Environment == Void, Value == Settings {
    /// The app's settings: one type-safe key, used by `StoredValue(.settings, default: .standard)`.
    static var settings: Self {
        .jsonFile(URL.appData.appending(path: "settings.json"))
    }
}

@MainActor @Suite struct ObservationExamplesTests {
    @Test func followingAStore() async throws {
        try await TemporaryDirectory.with { directory in
            let lines = Shared<[String]>([])
            let preferences = ValueStore<Void, Preferences>.jsonFile(directory.appending(path: "preferences.json"))
            let watching = Task {
                for await state in preferences.changes() {
                    switch state {
                    case .value(let preferences): lines.append("theme: \(preferences.theme)")
                    case .absent: lines.append("nothing saved yet")
                    case .failed(let error): lines.append("cannot read the preferences: \(error)")
                    }
                }
            }
            defer { watching.cancel() }
            #expect(await eventually { lines.value == ["nothing saved yet"] })
            try await preferences.save(Preferences(theme: "dark"))
            #expect(await eventually { lines.value.last == "theme: dark" })
        }
    }

    @Test func aStoredValue() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "preferences.json")
            let preferences = await StoredValue.loaded(.jsonFile(url), default: Preferences())
            preferences.value.fontSize += 1  // shown at once, saved in the background
            try await preferences.update { $0.fontSize += 1 }  // atomic, through the store
            if let error = preferences.error { print("could not save:", error) }
            #expect(preferences.value.fontSize == 16)
            #expect(try await ValueStore<Void, Preferences>.jsonFile(url).load().fontSize == 16)
        }
    }

    @Test func neverOverwritingWhatCouldNotBeRead() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "preferences.json")
            try Data("{ damaged".utf8).write(to: url)
            let preferences = await StoredValue.loaded(.jsonFile(url), default: Preferences())
            // preferences.error is `corrupted`; writes are refused until the file can be read
            await #expect(throws: ValueStoreError.self) { try await preferences.set(Preferences()) }
            _ = try await FileQuarantine.moveAside(url)
            await preferences.reload()  // absent now: shows the default, and writes work again
            try await preferences.set(Preferences(theme: "dark"))
            #expect(try await ValueStore<Void, Preferences>.jsonFile(url).load().theme == "dark")
        }
    }

    @Test func cachedFollowsOtherWriters() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "preferences.json")
            let cached = ValueStore<Void, Preferences>.jsonFile(url).cached()
            try await cached.save(Preferences())
            try await ValueStore<Void, Preferences>.jsonFile(url).save(Preferences(theme: "dark"))
            // The cache empties itself when the signal arrives; the next load reads the file.
            #expect(try await eventually { try await cached.load().theme == "dark" })
        }
    }
}
