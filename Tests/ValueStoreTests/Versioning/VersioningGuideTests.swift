import Foundation
import Testing
import ValueStoreTesting

@testable import ValueStore
@testable import ValueStoreTestHelper

/// The examples of Documentation/Versioning.md, run.
@Suite struct VersioningGuideTests {
    typealias Settings = VersioningGuide.Settings

    /// The examples of Documentation/Versioning.md.
    @Test func theGuidesExamples() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            try Data(#"{"name":"Ada Lovelace"}"#.utf8).write(to: url)

            let settings = ValueStore<Void, Data>.file(url).versioned(Settings.self)
            let legacy = ValueStore<Void, Data>.file(url).versioned(Settings.self, legacyVersion: 1)

            await #expect(throws: ValueStoreError(.corrupted)) { try await settings.load() }
            #expect(try await legacy.load() == Settings(first: "Ada", last: "Lovelace"))

            try await ValueStore<Void, Data>.file(url).save(VersionedTests.v4)
            do {
                try await settings.save(Settings(first: "Ada", last: "Lovelace"))
            } catch ValueStoreError.newerVersion {
                // A newer version of the app wrote this file: this one must not overwrite it.
                // To start over on purpose, remove it through the unversioned store.
                try await ValueStore<Void, Data>.file(url).remove()
            }
            #expect(!FileManager.default.fileExists(atPath: url.path(percentEncoded: false)))
            try await settings.save(Settings(first: "Ada", last: "Lovelace"))
            #expect(try url.bytes() == Data(#"{"version":2,"value":{"first":"Ada","last":"Lovelace"}}"#.utf8))
        }
    }

    @Test func theGuidesEncryptedExample() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.enc")
            let key = EncryptionKey.random()
            let secrets = ValueStore<Void, Data>.encryptedFile(url, key: key).versioned(Settings.self)
            try await secrets.save(Settings(first: "Ada", last: "Lovelace"))
            #expect(try await secrets.load().last == "Lovelace")
        }
    }

    @Test func everyShippedSettingsVersionLoads() async throws {
        try await VersionedValueLaws.check(
            Settings.self,
            fixtures: [
                1: Data(#"{"version":1,"value":{"name":"Ada Lovelace"}}"#.utf8),
                2: Data(#"{"version":2,"value":{"first":"Ada","last":"Lovelace"}}"#.utf8),
            ]
        )
    }

    @Test func everyShippedProfileVersionLoads() async throws {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        var fixtures: [Int: Data] = [:]
        for version in 1...3 {
            fixtures[version] = try Data(contentsOf: folder.appending(path: "profile-v\(version).json"))
        }
        try await VersionedValueLaws.check(Chain.Profile.self, fixtures: fixtures)
    }
}
