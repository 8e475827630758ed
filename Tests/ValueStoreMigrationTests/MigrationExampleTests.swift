import Foundation
import Testing
import ValueStore

// Code written against swift-valuestore 0.1's names. It builds here with deprecation warnings
// only (this target does not treat warnings as errors), each with a fix-it or a message that
// points to the new spelling; Documentation/MigratingFromValueStore0.md quotes it.

enum Theme: String, Sendable {
    case light, dark
}

struct Settings: Codable, Equatable, Sendable {
    var theme = "light"
    var fontSize = 14
}

final class Account {
    var token: String?
}

struct Persistence {
    var theme: ValueStore<Void, Theme>
    var settings: ValueStore<Void, Settings>
    var fontSize: ValueStore<Void, Int>
}

extension Persistence {
    static var mock: Self {
        .init(
            theme: ValueStore<Void, String>.const("dark").representing(by: Theme.self),
            settings: ValueStore<Void, Data>.error(ValueStoreError.noData).coded(.jsonCodec()),
            fontSize: Reference<Int>(14).valueStore
        )
    }
}

// The same stores after applying the fix-its and following the messages.
extension Persistence {
    static var migrated: Self {
        .init(
            theme: ValueStore<Void, String>.constant("dark").coded(.rawRepresentable),
            settings: ValueStore<Void, Data>.failing(ValueStoreError.notFound).coded(.json),
            fontSize: .inMemory(14)
        )
    }
}

@Suite struct MigrationExampleTests {
    @Test func theMigratedStoresBehaveAlike() async throws {
        for persistence in [Persistence.mock, .migrated] {
            #expect(try await persistence.theme.load() == .dark)
            await #expect(throws: ValueStoreError.notFound) { try await persistence.settings.load() }
            #expect(try await persistence.fontSize.update { $0 += 1 } == 15)
        }
    }

    @Test func theOriginalNamesStillBuild() async throws {
        let persistence = Persistence.mock
        #expect(try await persistence.theme.load() == .dark)
        await #expect(throws: ValueStoreError.noData) { try await persistence.settings.load() }
        #expect(try await persistence.fontSize.save(16) == 16)

        let celsius = Ref<Double>(100).valueStore
        let toCelsius = Conversion<Double, Double>(to: { ($0 - 32) * 5 / 9 }, from: { $0 * 9 / 5 + 32 })
        let fahrenheit = celsius.map(toCelsius)
        #expect(try await fahrenheit.load() == 212)
        let text = celsius.map({ Double($0)! }, { String($0) })
        #expect(try await text.load() == "100.0")
        let doubled = celsius.process(
            preprocess: { value in value / 2 },
            postprocess: { stored in stored * 2 }
        )
        #expect(try await doubled.load() == 200)

        let token = (\Account.token).valueStore()
        let account = Account()
        _ = try await token.save("abc", account)
        #expect(account.token == "abc")

        let themes = ValueStore<Void, String>.const("light").coded(Codec<Theme, String>.representing)
        #expect(try await themes.load() == .light)
        let broken = ValueStore<Void, String>.const("x").coded(Codec<Theme, String>.error(ValueStoreError.noData))
        await #expect(throws: ValueStoreError.noData) { try await broken.load() }
        let home = ValueStore<Void, String>.const("https://example.com").coded(Codec.url)
        #expect(try await home.load() == URL(string: "https://example.com"))
    }

    @Test func theOriginalUserDefaultsStoresBecomeStrict() async throws {
        let suite = temporarySuiteName()
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        let count = ValueStore<Void, Int>.unsafeRawUserDefaults("count", userDefaults: UserDefaults(suiteName: suite)!)
        let settings = ValueStore<Void, Settings>.unsafeJSONUserDefaults(
            "settings", userDefaults: UserDefaults(suiteName: suite)!)
        try await count.save(3)
        try await settings.save(Settings(theme: "dark"))
        #expect(try await ValueStore<Void, Int>.userDefaults("count", suiteName: suite).load() == 3)
        #expect(try await settings.load() == Settings(theme: "dark"))
        UserDefaults(suiteName: suite)!.set("three", forKey: "count")
        await #expect(throws: ValueStoreError(.decodingFailed), "a wrong type is no longer absence") {
            try await count.load()
        }
    }
}
