import Foundation
import Testing
import ValueStoreTestSupport
import ValueStoreTesting

@testable import ValueStore
@testable import ValueStoreTestHelper

@Suite struct VersionedTests {
    typealias Profile = Chain.Profile

    static func envelope(_ version: Int, _ value: String) -> Data {
        Data(#"{"version":\#(version),"value":\#(value)}"#.utf8)
    }

    static let v1 = envelope(1, #"{"name":"Ada Lovelace"}"#)
    static let v2 = envelope(2, #"{"first":"Ada","last":"Lovelace"}"#)
    static let v4 = envelope(4, #"{"first":"Ada","last":"Lovelace","pronouns":"she"}"#)

    @Test func obeysTheLaws() async throws {
        try await ValueStoreLaws.check(
            ValueStore<Void, Data>.inMemory().versioned(Profile.self), samples: .ada, .grace)
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Data>.file(directory.appending(path: "profile.json")).versioned(Profile.self)
            try await ValueStoreLaws.check(store, samples: .ada, .grace)
        }
    }

    @Test func everyDataStoreCanBeVersioned() async throws {
        try await TemporaryDirectory.with { directory in
            try await TemporarySuite.with { suite in
                let settingsKey = SettingsFile(directory.appending(path: "settings.plist"))
                    .store("profile", as: Data.self)
                let defaults = ValueStore<Void, Data>.userDefaults("profile", suiteName: suite.name)
                for base in [settingsKey, defaults] {
                    try await ValueStoreLaws.check(base.versioned(Profile.self), samples: .ada, .grace)
                    try await base.save(VersionedTests.v1)
                    #expect(try await base.versioned(Profile.self).load().first == "Ada", "migrated from version 1")
                    try await base.save(VersionedTests.v4)
                    await #expect(throws: ValueStoreError.newerVersion) {
                        try await base.versioned(Profile.self).save(.grace)
                    }
                    #expect(try await base.load() == VersionedTests.v4)
                }
            }
        }
    }

    @Test func theEnvelopeIsTheDocumentedBytes() async throws {
        let base = ValueStore<Void, Data>.inMemory()
        try await base.versioned(Profile.self).save(.ada)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let value = try encoder.encode(Profile.ada)
        #expect(try await base.load() == Data(#"{"version":3,"value":"#.utf8) + value + Data("}".utf8))
        #expect(
            try await base.load()
                == Data(#"{"version":3,"value":{"email":"ada@example.com","first":"Ada","last":"Lovelace"}}"#.utf8))
        let text = String(decoding: try await base.load(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"version":3,"value":{"#))
        #expect(text.contains(#""first":"Ada""#))
    }

    @Test func readsAHandWrittenEnvelope() async throws {
        let base = ValueStore<Void, Data>.inMemory(
            Data(#"{ "value": {"first": "Ada", "last": "Lovelace"}, "version": 3 }"#.utf8))
        #expect(try await base.versioned(Profile.self).load() == Profile(first: "Ada", last: "Lovelace"))
    }

    @Test(arguments: [
        #"{"version":3,"value":{"first":"Ada","last":"Lovelace"},"note":{"by":"hand"}}"#,
        #"{"version":3,"value":{"first":"Ada","last":"Lovelace"}} "#,
        #"{"version":03,"value":{"first":"Ada","last":"Lovelace"}}"#,
        #"{"version":2,"value":{"first":"Ada","last":"Lovelace"}}"#,
        #"{"version":1,"value":{"name":"Ada Lovelace"}}"#,
    ])
    func readsEveryFormOfTheEnvelopeAsAFullParseWould(json: String) async throws {
        let store = ValueStore<Void, Data>.inMemory(Data(json.utf8)).versioned(Profile.self)
        if json.contains("03") {
            await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }
        } else {
            #expect(try await store.load() == Profile(first: "Ada", last: "Lovelace"))
        }
    }

    @Test func findsTheWrittenFormWithoutParsing() throws {
        typealias Envelope = VersionEnvelope<Profile>
        let data = Data(#"xx{"version":-12,"value":[1]}"#.utf8).dropFirst(2)
        let written = try #require(Envelope.written(data))
        #expect(written.version == -12)
        #expect(String(decoding: data[written.value], as: UTF8.self) == "[1]")
        #expect(Envelope.written(Data(#"{"version":12,"value":}"#.utf8)) == nil)
        #expect(Envelope.written(Data(#"{"version":012,"value":1}"#.utf8)) == nil)
        #expect(Envelope.written(Data(#"{"version":1234567890123456789,"value":1}"#.utf8)) == nil)
        #expect(Envelope.written(Data(#"{"version":"1","value":1}"#.utf8)) == nil)
        #expect(Envelope.written(Data(#"{"version":1,"value":1} "#.utf8)) == nil)
    }

    @Test(arguments: [v1, v2])
    func migratesOlderDataStepByStepWithoutWriting(stored: Data) async throws {
        let base = ValueStore<Void, Data>.inMemory(stored)
        let store = base.versioned(Profile.self)
        #expect(try await store.load() == Profile(first: "Ada", last: "Lovelace"))
        #expect(try await base.load() == stored, "loading never writes")

        let updated = try await store.update { $0.email = "ada@example.com" }
        #expect(updated == .ada)
        #expect(
            try await base.load()
                == Self.envelope(3, #"{"email":"ada@example.com","first":"Ada","last":"Lovelace"}"#))
    }

    @Test func aChainOfThreeVersionsMigratesAFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "profile.json")
            try await ValueStore<Void, Data>.file(url).save(Self.v1)
            let store = ValueStore<Void, Data>.file(url).versioned(Profile.self)
            #expect(try await store.load() == Profile(first: "Ada", last: "Lovelace"))
            #expect(try url.bytes() == Self.v1)
            try await store.save(.grace)
            #expect(String(decoding: try url.bytes(), as: UTF8.self).hasPrefix(#"{"version":3,"#))
            #expect(try await store.load() == .grace)
        }
    }

    @Test func legacyDataIsReadAsTheLegacyVersion() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "profile.json")
            try await ValueStore<Void, Chain.ProfileV1>.jsonFile(url).save(Chain.ProfileV1(name: "Ada Lovelace"))
            let legacy = ValueStore<Void, Data>.file(url).versioned(Profile.self, legacyVersion: 1)
            #expect(try await legacy.load() == Profile(first: "Ada", last: "Lovelace"))
            #expect(try url.bytes() == Data(#"{"name":"Ada Lovelace"}"#.utf8))

            let error = try await #require(throws: ValueStoreError.self) {
                try await ValueStore<Void, Data>.file(url).versioned(Profile.self).load()
            }
            #expect(error.code == .corrupted)
            #expect(error.description.contains("no version envelope"))
            #expect(error.description.contains("profile.json"))

            try await legacy.update { $0.email = "ada@example.com" }
            #expect(try await ValueStore<Void, Data>.file(url).versioned(Profile.self).load() == .ada)
        }
    }

    @Test func legacyDataOfTheCurrentVersion() async throws {
        let bare = try JSONEncoder().encode(Profile.grace)
        let store = ValueStore<Void, Data>.inMemory(bare).versioned(Profile.self, legacyVersion: 3)
        #expect(try await store.load() == .grace)
    }

    @Test func newerDataIsNeverReadNorHidden() async throws {
        let base = ValueStore<Void, Data>.inMemory(Self.v4)
        let store = base.versioned(Profile.self)
        let error = try await #require(throws: ValueStoreError.self) { try await store.load() }
        #expect(error.code == .newerVersion)
        #expect(error.description.contains("stored by schema 4; this app reads up to 3"))
        await #expect(throws: ValueStoreError.newerVersion) { try await store.default(.grace).load() }
        await #expect(throws: ValueStoreError.newerVersion) { try await store.optional().load() }
        await #expect(throws: ValueStoreError.newerVersion) { try await store.cached().load() }
        #expect(try await base.load() == Self.v4)
    }

    @Test func writesOverNewerDataAreRefusedAndWriteNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "profile.json")
            try await ValueStore<Void, Data>.file(url).save(Self.v4)
            let store = ValueStore<Void, Data>.file(url).versioned(Profile.self)
            let save = try await #require(throws: ValueStoreError.self) { try await store.save(.grace) }
            #expect(save.code == .newerVersion)
            #expect(
                save.description.contains("stored by schema 4; this app reads up to 3, so it does not overwrite it"))
            await #expect(throws: ValueStoreError.newerVersion) { try await store.update { $0.first = "Grace" } }
            await #expect(throws: ValueStoreError.newerVersion) {
                try await store.default(.grace).update { $0.first = "G" }
            }
            await #expect(throws: ValueStoreError.newerVersion) { try await store.optional().set(nil) }
            let remove = try await #require(throws: ValueStoreError.self) { try await store.remove() }
            #expect(remove.code == .newerVersion)
            #expect(remove.description.contains("so it does not remove it"))
            #expect(try url.bytes() == Self.v4)
        }
    }

    @Test func newerDataEditedByHandIsRefusedToo() async throws {
        let edited = Data(#"{ "value": {"first": "Ada"}, "version": 4 }"#.utf8)
        let base = ValueStore<Void, Data>.inMemory(edited)
        let store = base.versioned(Profile.self)
        await #expect(throws: ValueStoreError.newerVersion) { try await store.load() }
        await #expect(throws: ValueStoreError.newerVersion) { try await store.save(.grace) }
        await #expect(throws: ValueStoreError.newerVersion) { try await store.remove() }
        #expect(try await base.load() == edited)
    }

    @Test func removingAnAbsentValueTakesNoLock() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "nested/profile.json")
            try await ValueStore<Void, Data>.file(url).versioned(Profile.self).remove()
            #expect(try directory.contents() == [])
        }
    }

    @Test func damagedDataIsCorruptedAndSavesReplaceIt() async throws {
        let base = ValueStore<Void, Data>.inMemory(Data(#"{"version":3,"val"#.utf8))
        let store = base.versioned(Profile.self)
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.update { $0 = .ada } }
        try await store.save(.ada)
        #expect(try await store.load() == .ada)
        try await base.save(Data())
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }
    }

    @Test func aWrongShapeNamesTheVersionAndTheType() async throws {
        let store = ValueStore<Void, Data>.inMemory(Self.envelope(1, #"{"nom":"Ada"}"#)).versioned(Profile.self)
        let error = try await #require(throws: ValueStoreError.self) { try await store.load() }
        #expect(error.code == .decodingFailed)
        #expect(error.description.contains("stored by schema 1, which did not decode as ProfileV1"))
        #expect(
            error.reason
                == "stored by schema 1, which did not decode as ProfileV1: missing key 'name' at value; types tried: ProfileV1"
        )
    }

    @Test func aThrowingMigrationNamesTheVersionAndEveryTypeTried() async throws {
        let store = ValueStore<Void, Data>.inMemory(Self.envelope(1, #"{"name":""}"#)).versioned(Profile.self)
        let error = try await #require(throws: ValueStoreError.self) { try await store.load() }
        #expect(error.code == .decodingFailed)
        #expect(
            error.reason
                == "stored by schema 1; ProfileV2(migrating:) threw EmptyName; types tried: ProfileV1 → ProfileV2")
        #expect(error.underlyingError is Chain.EmptyName)
        await #expect(throws: ValueStoreError(.decodingFailed)) { try await store.default(.grace).load() }
    }

    @Test func aVersionMissingFromTheChainIsDecodingFailed() async throws {
        let store = ValueStore<Void, Data>.inMemory(Self.envelope(2, #"{"name":"Ada"}"#)).versioned(Chain.Skipping.self)
        let error = try await #require(throws: ValueStoreError.self) { try await store.load() }
        #expect(error.code == .decodingFailed)
        #expect(
            error.reason
                == "stored by schema 2, which no type of the chain declares; types tried: Skipping (schema 3) → ProfileV1 (schema 1)"
        )
        let migrated = try await ValueStore<Void, Data>.inMemory(Self.v1).versioned(Chain.Skipping.self).load()
        #expect(migrated.name == "Ada Lovelace")
    }

    @Test func anInconsistentChainIsInvalidConfiguration() async throws {
        let backwards = ValueStore<Void, Data>.inMemory(Self.v1).versioned(Chain.Backwards.self)
        let error = try await #require(throws: ValueStoreError.self) { try await backwards.load() }
        #expect(error.code == .invalidConfiguration)
        #expect(error.description.contains("each PreviousVersion must have a lower version"))
        await #expect(throws: ValueStoreError(.invalidConfiguration)) {
            try await backwards.save(Chain.Backwards(name: "x"))
        }
        let unknownLegacy = ValueStore<Void, Data>.inMemory(Self.v1).versioned(Profile.self, legacyVersion: 7)
        await #expect(throws: ValueStoreError(.invalidConfiguration)) { try await unknownLegacy.load() }
    }

    @Test func aVersionedEncryptedFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "profile.enc")
            let key = EncryptionKey.random()
            let secrets = ValueStore<Void, Data>.encryptedFile(url, key: key).versioned(Profile.self)
            try await ValueStoreLaws.check(secrets, samples: .ada, .grace)
            try await secrets.save(.ada)
            #expect(try await secrets.load() == .ada)
            let bytes = try url.bytes()
            #expect(bytes.range(of: Data("Lovelace".utf8)) == nil)
            #expect(bytes.range(of: Data("version".utf8)) == nil)

            try await ValueStore<Void, Data>.encryptedFile(url, key: key).save(Self.v1)
            #expect(try await secrets.load() == Profile(first: "Ada", last: "Lovelace"))

            try await ValueStore<Void, Data>.encryptedFile(url, key: key).save(Self.v4)
            let newer = try await ValueStore<Void, Data>.encryptedFile(url, key: key).load()
            let error = try await #require(throws: ValueStoreError.self) { try await secrets.save(.grace) }
            #expect(error.code == .newerVersion)
            #expect(!error.description.contains("Lovelace"))
            await #expect(throws: ValueStoreError.newerVersion) { try await secrets.remove() }
            #expect(try await ValueStore<Void, Data>.encryptedFile(url, key: key).load() == newer)

            let wrongKey = ValueStore<Void, Data>.encryptedFile(url, key: .random()).versioned(Profile.self)
            await #expect(throws: ValueStoreError(.wrongKey)) { try await wrongKey.save(.grace) }
        }
    }

    @Test func aStoreThatTakesAnEnvironment() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "profile.enc")
            let key = EncryptionKey.random()
            let keyed: ValueStore<EncryptionKey, Profile> =
                ValueStore<EncryptionKey, Data>.encryptedFile(url).versioned(Profile.self)
            try await ValueStoreLaws.check(keyed, environment: key, samples: .ada, .grace)
            #expect(try await keyed.save(.ada, key) == .ada)
            #expect(try await keyed.load(key) == .ada)
            #expect(try await keyed.update(environment: key) { $0.last = "King" }.last == "King")
        }
    }

    @Test func concurrentUpdatesStayAtomic() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "profile.json")
            try await ValueStore<Void, Data>.file(url).save(Self.v1)
            let store = ValueStore<Void, Data>.file(url).versioned(Profile.self)
            try await concurrently(40) { index in
                try await store.update { $0.last += "." }
            }
            #expect(try await store.load().last == "Lovelace" + String(repeating: ".", count: 40))
        }
    }

    @Test func anOlderAppInAnotherProcessNeitherReadsNorWritesNewerData() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "note.json")
            let newer = Self.envelope(3, #"{"title":"new","body":"app","tags":["x"]}"#)
            try await ValueStore<Void, Data>.file(url).save(newer)
            let oldApp = try HelperProcess("old-app", url.path(percentEncoded: false))
            #expect(await oldApp.exitStatus() == 0)
            #expect(
                oldApp.lines() == [
                    "load newerVersion", "save newerVersion", "update newerVersion", "remove newerVersion",
                ])
            #expect(try url.bytes() == newer)
        }
    }

    @Test func anOlderAppInAnotherProcessReadsAndMigratesOlderData() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "note.json")
            try await ValueStore<Void, Data>.file(url).save(Self.envelope(1, #"{"text":"hello"}"#))
            let oldApp = try HelperProcess("old-app", url.path(percentEncoded: false))
            #expect(await oldApp.exitStatus() == 0)
            #expect(oldApp.lines() == ["load ok", "save ok", "update ok", "remove ok"])
            #expect(!FileManager.default.fileExists(atPath: url.path(percentEncoded: false)))
        }
    }

    /// The check and the write happen under the lock other writers take: once a newer app's save
    /// returns, no save of the old app lands after it, however the two processes interleave.
    @Test func theCheckHoldsTheLockAcrossProcesses() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "note.json")
            let oldApp = try HelperProcess("old-app-save-loop", url.path(percentEncoded: false), "100000")
            let base = ValueStore<Void, Data>.file(url)
            // The old app is in its loop once its first save returned.
            #expect(await oldApp.nextLine() == "saving")
            let newer = Self.envelope(3, #"{"title":"new","body":"app","tags":[]}"#)
            try await base.save(newer)
            #expect(await oldApp.exitStatus() == 0)
            let lines = oldApp.lines()
            #expect(lines.count == 1 && lines[0].hasPrefix("refused after "), "\(lines)")
            #expect(try url.bytes() == newer)
        }
    }
}
