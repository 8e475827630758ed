import Foundation
import Testing
import ValueStoreTesting

@testable import ValueStore

// The code shown in README.md and Documentation/*.md, compiled and run here (the models and
// stores it uses are in DocumentationExampleModels.swift). `DocumentationTests` checks that every
// Swift block of the guides appears in a file of the tests or of the demo, so a guide cannot
// drift from code that compiles.

@Suite struct DocumentationExamplesTests {
    @Test func tour() async throws {
        try await TemporaryDirectory.with { directory in
            let preferences = ValueStore<Void, Preferences>
                .jsonFile(directory.appending(path: "preferences.json"))
                .default(Preferences())

            let current = try await preferences.load()  // Preferences() at first
            try await preferences.save(Preferences(theme: "dark", fontSize: 16))
            let bigger = try await preferences.update { $0.fontSize += 1 }  // atomic, even across processes

            #expect(current == Preferences())
            #expect(bigger.fontSize == 17)
        }
    }

    @Test func persistenceStruct() async throws {
        try await TemporaryDirectory.with { directory in
            let persistence = AppPersistence.live(directory: directory)
            try await persistence.token.save("secret")
            #expect(try await AppPersistence.live(directory: directory).token.load() == "secret")
            #expect(try await AppPersistence.mock.token.load() == "test-token")
        }
    }

    @Test func aBlockingStoreWrittenByHand() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Data>.blob("avatar.png", in: BlobFolder(directory: directory))
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
            try await store.save(Data([1, 2, 3]))
            #expect(try await store.load() == Data([1, 2, 3]))
            try await store.remove()
            try await store.remove()
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        }
    }

    @Test func typeSafeKeys() async throws {
        let store: ValueStore<Void, [User]> = .users
        #expect(store.label.hasSuffix("/users.json'"))
    }

    @Test func errors() async throws {
        var shownError: ValueStoreError?
        func load(_ store: ValueStore<Void, Preferences>) async throws -> Preferences {
            let preferences: Preferences
            do {
                preferences = try await store.load()
            } catch ValueStoreError.notFound {
                preferences = Preferences()
            } catch let error as ValueStoreError where error.code == .corrupted {
                shownError = error  // for the user: The stored data is corrupted in file '…/preferences.json': …
                throw error
            }
            return preferences
        }
        #expect(try await load(.inMemory()) == Preferences())
        #expect(shownError == nil)
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "preferences.json")
            try Data("{".utf8).write(to: url)
            await #expect(throws: ValueStoreError(.corrupted)) { try await load(.jsonFile(url)) }
        }
        let shown = try #require(shownError, "the corrupted branch ran")
        #expect("\(shown)".hasPrefix("The stored data is corrupted in file '"))
    }

    @Test func customStore() async throws {
        let box = ValueStore<Void, [String: String]>.inMemory([:])
        let remote = ValueStore<Session, String>(
            load: { session in
                guard let name = try await box.load()[session.accountID] else {
                    throw ValueStoreError.notFound
                }
                return name
            },
            save: { name, session in
                try await box.update { $0[session.accountID] = name }
                return name
            },
            remove: { session in
                try await box.update { $0[session.accountID] = nil }
            }
        )
        let name = remote.provide(Session(accountID: "42"))
        try await name.save("Ada")
        #expect(try await name.load() == "Ada")

        let fromApp: ValueStore<AppEnvironment, String> = remote.pullback(\.session)
        #expect(try await fromApp.load(AppEnvironment(session: Session(accountID: "42"))) == "Ada")
    }

    @Test func combinators() async throws {
        try await TemporaryDirectory.with { directory in
            let legacyToken = ValueStore<Void, String>.inMemory("from-version-1")

            let token = ValueStore<Void, Data>
                .file(directory.appending(path: "token"), options: .private)
                .coded(Codec<String, Data>.utf8)
                .replacing(legacyToken)
                .cached()

            let value = try await token.load()  // migrated from legacyToken, then served from memory
            #expect(value == "from-version-1")
        }
    }

    @Test func mapAndCoded() async throws {
        let celsius = ValueStore<Void, Double>.inMemory(21)
        let fahrenheit = celsius.map(load: { $0 * 9 / 5 + 32 }, save: { ($0 - 32) * 5 / 9 })

        enum Theme: String, Sendable { case light, dark }
        let theme = ValueStore<Void, String>.inMemory("dark").coded(Codec<Theme, String>.rawRepresentable)

        #expect(try await fahrenheit.load() == 69.8)
        #expect(try await theme.load() == .dark)
    }

    @Test func recovery() async throws {
        let launches = ValueStore<Void, Int>.inMemory().default(0)
        try await launches.update { $0 += 1 }  // 1: update starts from the default

        let token = ValueStore<Void, String>.inMemory().optional()
        let maybe = try await token.load()  // nil, not an error
        try await token.save(nil)  // removes

        #expect(try await launches.load() == 1)
        #expect(maybe == nil)
    }

    @Test func copyAndMove() async throws {
        let draft = ValueStore<Void, String>.inMemory("hello")
        let published = ValueStore<Void, String>.inMemory()
        try await draft.copy(to: published)  // both hold "hello"
        try await draft.move(to: published)  // only published holds it
        try await published.set(nil)  // set(nil) removes

        await #expect(throws: ValueStoreError.notFound) { try await draft.load() }
    }

    @Test func cachedByAFasterStore() async throws {
        let remote = ValueStore<Void, Preferences>.inMemory(Preferences())
        let preferences = remote.cached(by: .inMemory())
        #expect(try await preferences.load() == Preferences())
    }

    @Test func laws() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Preferences>.jsonFile(directory.appending(path: "laws.json"))
            try await ValueStoreLaws.check(store, samples: Preferences(), Preferences(theme: "dark"))
        }
    }

    @Test func recorder() async throws {
        let recorder = ValueStoreRecorder<Int>()
        let counter = ValueStore<Void, Int>.inMemory(0).recording(into: recorder)

        try await counter.update { $0 += 1 }

        #expect(recorder.operations == [.load, .save(1)])
    }

    @Test func faultInjection() async throws {
        let flaky = ValueStore<Void, Int>.inMemory(1).injecting(.failingCall(2), .delaying(.milliseconds(1)))
        let full = ValueStore<Void, Int>.inMemory(1).injecting(
            .failingSaves(with: ValueStoreError(.io, reason: "No space left on device"))
        )

        #expect(try await flaky.load() == 1)
        await #expect(throws: ValueStoreError(.io)) { try await flaky.load() }
        await #expect(throws: ValueStoreError(.io)) { try await full.save(2) }
        #expect(try await full.load() == 1)
    }

    @Test func testingWithMocks() async throws {
        var persistence = AppPersistence.mock
        persistence.token = .failing(ValueStoreError(.locked))

        await #expect(throws: ValueStoreError(.locked)) { try await persistence.token.load() }
    }

    @Test func fileOptions() async throws {
        try await TemporaryDirectory.with { directory in
            let secret = ValueStore<Void, Data>.file(directory.appending(path: "secret"), options: .private)
            let thumbnails = ValueStore<Void, Data>.file(directory.appending(path: "thumbnails"), options: .cache)
            let shared = ValueStore<Void, Data>.file(
                directory.appending(path: "shared"),
                options: FileOptions(durability: .durable, permissions: 0o640)
            )

            try await secret.save(Data([1]))
            try await thumbnails.save(Data([2]))
            try await shared.save(Data([3]))
            #expect(try directory.appending(path: "secret").permissions() == 0o600)
        }
    }

    @Test func quarantine() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "preferences.json")
            try Data("{".utf8).write(to: url)
            let store = ValueStore<Void, Preferences>.jsonFile(url).default(Preferences())

            var keptForRecovery: URL?
            var preferences: Preferences
            do {
                preferences = try await store.load()
            } catch let error as ValueStoreError where error.code == .corrupted || error.code == .decodingFailed {
                keptForRecovery = try await FileQuarantine.moveAside(url)  // preferences.json.corrupt-<time>-<random>
                preferences = try await store.load()  // the default, now
            }
            #expect(preferences == Preferences())
            // The damaged file was moved aside, not loaded past: the catch branch ran.
            let kept = try FileQuarantine.files(for: url)
            #expect(kept.count == 1)
            #expect(keptForRecovery != nil && keptForRecovery == kept.first)
            #expect(try kept.first?.bytes() == Data("{".utf8))
            #expect(!FileManager.default.fileExists(atPath: url.path(percentEncoded: false)))
        }
    }

    @Test func propertyListFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let binary = ValueStore<Void, Preferences>.plistFile(directory.appending(path: "preferences.plist"))
            let readable = ValueStore<Void, Preferences>.plistFile(
                directory.appending(path: "debug.plist"), format: .xml)

            try await binary.save(Preferences())
            try await readable.save(Preferences())
            #expect(try await readable.load() == Preferences())
        }
    }

    @Test func encryptedFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let keysDirectory = directory.appending(path: "keys")
            let dataDirectory = directory.appending(path: "data")

            let key = try await EncryptionKey.loadOrCreate(at: keysDirectory.appending(path: "vault.key"))
            let token = ValueStore<Void, String>.encryptedFile(dataDirectory.appending(path: "token.enc"), key: key)
            try await token.save("s3cr3t")

            #expect(try await token.load() == "s3cr3t")
        }
    }

    @Test func passphraseKeys() async throws {
        try await TemporaryDirectory.with { dataDirectory in
            let passphrase = "correct horse battery staple"
            let key = try await EncryptionKey.derived(
                fromPassphrase: passphrase,
                saltFile: dataDirectory.appending(path: "vault.salt")
            )
            let diary = ValueStore<Void, String>.encryptedFile(dataDirectory.appending(path: "diary.enc"), key: key)

            try await diary.save("dear diary")
            #expect(try await diary.load() == "dear diary")
        }
    }

    @Test func keysFromTheEnvironment() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let session = (user: "ada", key: EncryptionKey.random())

            let tokens = ValueStore<EncryptionKey, String>.encryptedFile(url)
            _ = try await tokens.save("s3cr3t", session.key)
            let value = try await tokens.load(session.key)

            #expect(value == "s3cr3t")
        }
    }

    @Test func vaults() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let key = EncryptionKey.random()

            let vault = KeyVault()  // locked
            let token = ValueStore<Void, String>.encryptedFile(url, vault: vault)
            vault.unlock(with: key)
            try await token.save("s3cr3t")
            vault.lock()
            // try await token.load() now throws ValueStoreError.locked

            await #expect(throws: ValueStoreError(.locked)) { try await token.load() }
        }
    }

    @Test func keyRotation() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let oldKey = EncryptionKey.random()
            let newKey = EncryptionKey.random()
            try await ValueStore<Void, String>.encryptedFile(url, key: oldKey).save("s3cr3t")

            let keyring = EncryptionKeyring(current: newKey, previous: [oldKey])
            let token = ValueStore<Void, String>.encryptedFile(url, keyring: keyring)
            let value = try await token.load()  // read with oldKey
            try await keyring.reencryptFile(at: url)  // rewritten with newKey

            #expect(value == "s3cr3t")
            #expect(try await ValueStore<Void, String>.encryptedFile(url, key: newKey).load() == "s3cr3t")
        }
    }
}
