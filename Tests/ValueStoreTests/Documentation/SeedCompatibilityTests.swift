import Foundation
import Testing
import ValueStore

// The documented examples of swift-valuestore 0.1 (its introductory article, its README and its
// Utilities guide), written in this library's API. Each test says which example it walks
// through and what, if anything, changed; Documentation/MigratingFromValueStore0.md has the map.

/// The article's keys: an enum, so the compiler rejects a duplicate or a typo.
enum UserDefaultsKey: String {
    case userPreference1
    case userPreference2
}

/// What the article's network store needs: a fake server here, standing in for `get`, `post` and
/// `delete`.
struct NetworkEnvironment: Sendable {
    var server = ValueStore<Void, [String: String]>.inMemory([:])

    func get(_ endpoint: String) async throws -> String {
        guard let value = try await server.load()[endpoint] else { throw ValueStoreError.notFound }
        return value
    }

    func post(_ value: String, to endpoint: String) async throws -> String {
        try await server.update { $0[endpoint] = value }
        return value
    }

    func delete(_ endpoint: String) async throws {
        try await server.update { $0[endpoint] = nil }
    }
}

/// The article's `PersistenceEnvironment`: one store per persisted value.
struct PersistenceEnvironment: Sendable {
    var userPreference1: ValueStore<Void, String>
    var userPreference2: ValueStore<Void, Int>
    var networkPreference: ValueStore<NetworkEnvironment, String>
}

extension ValueStore where Environment == Void, Value: Codable & Sendable {
    /// The article's `userDefaults(_:)`, until this library has a strict UserDefaults store: a
    /// JSON file per key, in a folder the caller chooses.
    static func userDefaults(_ key: UserDefaultsKey, in folder: URL) -> Self {
        .jsonFile(folder.appending(path: "\(key.rawValue).json"))
    }
}

extension ValueStore where Environment == NetworkEnvironment, Value == String {
    /// The article's network store, unchanged but for its closures' bodies.
    static func network(_ endpoint: String) -> Self {
        .init(
            load: { networkEnvironment in
                try await networkEnvironment.get(endpoint)
            },
            save: { value, networkEnvironment in
                try await networkEnvironment.post(value, to: endpoint)
            },
            remove: { networkEnvironment in
                try await networkEnvironment.delete(endpoint)
            }
        )
    }
}

extension PersistenceEnvironment {
    static func live(in folder: URL) -> Self {
        .init(
            userPreference1: .userDefaults(.userPreference1, in: folder),
            userPreference2: .userDefaults(.userPreference2, in: folder),
            networkPreference: .network("preference")
        )
    }

    /// The README's mock, with `constant` for `const`.
    static var mock: Self {
        .init(
            userPreference1: .constant("mock"),
            userPreference2: .constant(2),
            networkPreference: .constant("remote")
        )
    }
}

@Suite struct SeedCompatibilityTests {
    /// The article's "Usage": load, change, save. Absence throws `notFound`, so the article's
    /// first load (of nothing) either throws or, as here, starts from a default.
    @Test func theArticlesUsage() async throws {
        try await TemporaryDirectory.with { folder in
            let environment = PersistenceEnvironment.live(in: folder)
            await #expect(throws: ValueStoreError.notFound) { try await environment.userPreference1.load() }

            var storedPreference1 = try await environment.userPreference1.load(default: "")
            storedPreference1 += "!"
            try await environment.userPreference1.save(storedPreference1)
            #expect(try await environment.userPreference1.load() == "!")

            try await environment.userPreference2.save(2)
            #expect(try await environment.userPreference2.update { $0 += 1 } == 3)

            let network = NetworkEnvironment()
            _ = try await environment.networkPreference.save("on", network)
            #expect(try await environment.networkPreference.load(network) == "on")
            try await environment.networkPreference.remove(network)
            await #expect(throws: ValueStoreError.notFound) { try await environment.networkPreference.load(network) }
        }
    }

    /// The README's mock: constant stores ignore saves.
    @Test func theReadmesMock() async throws {
        let mock = PersistenceEnvironment.mock
        #expect(try await mock.userPreference1.load() == "mock")
        try await mock.userPreference1.save("changed")
        #expect(try await mock.userPreference1.load() == "mock")
        #expect(try await mock.networkPreference.load(NetworkEnvironment()) == "remote")
    }

    /// The README's keychain store: strings in the keychain, JSON documents as UTF-8.
    @Test func theReadmesKeychainCoding() async throws {
        let keychainItem = ValueStore<Void, String>.inMemory()
        let settings =
            keychainItem
            .coded(Codec<String, Data>.utf8.reversed())
            .coded(Codec<Settings, Data>.json)
        try await settings.save(.custom)
        #expect(try await settings.load() == .custom)
    }

    /// The article's migration: `replacing` loads from the new store and, where it holds nothing,
    /// moves the value from the old one.
    @Test func migratingWithReplacing() async throws {
        let old = ValueStore<Void, String>.inMemory("kept")
        let new = ValueStore<Void, String>.inMemory()
        let migrated = new.replacing(old)
        #expect(try await migrated.load() == "kept")
        #expect(try await new.load() == "kept")
        await #expect(throws: ValueStoreError.notFound) { try await old.load() }
    }

    /// The Utilities guide: `copy`, `move`, `set`, `coded`, `representing(by:)` (now
    /// `coded(.rawRepresentable)`) and `load(default:)`, which now throws for anything but
    /// absence.
    @Test func theUtilitiesGuide() async throws {
        let source = ValueStore<Void, Int>.inMemory(1)
        let target = ValueStore<Void, Int>.inMemory()
        #expect(try await source.copy(to: target) == 1)
        #expect(try await source.load() == 1)
        #expect(try await source.move(to: target) == 1)
        await #expect(throws: ValueStoreError.notFound) { try await source.load() }

        try await target.set(nil)
        await #expect(throws: ValueStoreError.notFound) { try await target.load() }
        try await target.set(5)
        #expect(try await target.load() == 5)

        let theme = ValueStore<Void, String>.inMemory("dark").coded(Codec<Theme, String>.rawRepresentable)
        #expect(try await theme.load() == .dark)

        #expect(try await source.load(default: 7) == 7)
        let corrupt = ValueStore<Void, String>.inMemory("sepia").coded(Codec<Theme, String>.rawRepresentable)
        await #expect(throws: ValueStoreError.self) { try await corrupt.load(default: .light) }
    }

    /// The Utilities guide's `cached(by:)`: loads come from the cache once it holds the value;
    /// saves go to the base first, then the cache.
    @Test func cachingByAFasterStore() async throws {
        let slow = ValueStore<Void, String>.inMemory("remote")
        let fast = ValueStore<Void, String>.inMemory()
        let cached = slow.cached(by: fast)
        #expect(try await cached.load() == "remote")
        #expect(try await fast.load() == "remote")
        try await cached.save("new")
        #expect(try await slow.load() == "new")
        #expect(try await fast.load() == "new")
    }

    /// 0.1.4's own `testCached`, with `inMemory` for `Ref`: `cached(load:environment:)` returns
    /// the stored value, and fetches and saves only where nothing is stored.
    @Test func cachedLoad() async throws {
        let store = ValueStore<Void, Int>.inMemory(7)
        let valueCached = try await store.cached(load: { 1 }, environment: ())
        #expect(valueCached == 7)
        try await store.remove()
        let valueNotCached = try await store.cached(load: { 11 }, environment: ())
        #expect(valueNotCached == 11)
        #expect(try await store.load() == 11)
    }

    /// The original `Reference` and key path stores: `inMemory` and `property(_:)` now.
    @Test func referencesAndKeyPaths() async throws {
        let reference = ValueStore<Void, Int>.inMemory(1)
        #expect(try await reference.update { $0 += 1 } == 2)

        let account = Account()
        let token = (\Account.token).valueStore()
        _ = try await token.save("abc", account)
        #expect(account.token == "abc")
    }

    /// The original `Codec.url`, `Codec.error` (now `failing`) and `mapError`.
    @Test func codecs() async throws {
        let home = ValueStore<Void, String>.inMemory("https://example.com").coded(Codec<URL, String>.url)
        #expect(try await home.load() == URL(string: "https://example.com"))
        let failing = Codec<Int, String>.failing(Boom(id: 1)).mapError { _ in Boom(id: 2) }
        #expect(throws: Boom(id: 2)) { try failing.from("1") }
    }

    /// The original `process(preprocess:postprocess:)`: the asynchronous `map(load:save:)`.
    @Test func asynchronousConversions() async throws {
        let vault = Vault()
        let sealedStore = ValueStore<Void, [UInt8]>.inMemory()
        let secret = sealedStore.map(
            load: { sealed in try await vault.open(sealed) },
            save: { secret in try await vault.seal(secret) }
        )
        try await secret.save("hunter2")
        #expect(try await secret.update { $0 += "!" } == "hunter2!")
    }
}
