import Foundation
import Testing

@testable import ValueStore

/// A symbolic link at a file store's path is kept: what it names is read and written through it,
/// and a link that names nothing is unreachable, not absent, so no default stands in and nothing
/// replaces the link.
@Suite struct FileSymbolicLinkTests {
    static func isLink(_ url: URL) throws -> Bool {
        let type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
        return type == .typeSymbolicLink
    }

    @Test func aLinkToADirectoryThatIsNotThereIsUnreachableNotAbsent() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            let target = directory.appending(path: "volume/settings.json")  // not mounted yet
            try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
            let store = ValueStore<Void, Int>.jsonFile(url)
            let failure = await #expect(throws: ValueStoreError.self) { try await store.load() }
            #expect(failure?.code == .io)
            #expect(failure?.description.contains(target.path) == true, "the error names the missing target")
            await #expect(throws: ValueStoreError.self) { try await store.default(0).load() }
            await #expect(throws: ValueStoreError.self) { try await store.default(0).update { $0 += 1 } }
            await #expect(throws: ValueStoreError.self) { try await store.save(1) }
            #expect(try Self.isLink(url), "the link was replaced")
            #expect(!FileManager.default.fileExists(atPath: target.path))
        }
    }

    @Test func aSaveAndAnUpdateWriteThroughALinkAndKeepIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            let volume = directory.appending(path: "volume")
            try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
            let target = volume.appending(path: "settings.json")
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "volume/settings.json")
            let store = ValueStore<Void, Int>.jsonFile(url)
            // The link names a file not written yet: unreachable still, so no default stands in.
            await #expect(throws: ValueStoreError.self) { try await store.default(0).load() }
            try await store.save(1)
            #expect(try Self.isLink(url))
            #expect(try await ValueStore<Void, Int>.jsonFile(target).load() == 1)
            #expect(try await store.update { $0 += 1 } == 2)
            #expect(try Self.isLink(url))
            #expect(try await ValueStore<Void, Int>.jsonFile(target).load() == 2)
            #expect(try await store.load() == 2)
            try await store.remove()
            #expect(try Self.isLink(url), "a remove takes the file the link names, not the link")
            #expect(!FileManager.default.fileExists(atPath: target.path))
        }
    }

    @Test func aStreamOverTheLinkSeesWritesThroughIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let volume = directory.appending(path: "volume")
            try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "volume/count.json")
            let store = ValueStore<Void, Int>.jsonFile(url)
            try await store.save(1)
            let cached = store.cached()
            #expect(try await cached.load() == 1)
            try await ValueStore<Void, Int>.jsonFile(url).save(2)
            #expect(try await eventually { try await cached.load() == 2 })
        }
    }

    @Test func aCacheOverALinkSeesAnotherProcessWriteTheFileItNames() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let volume = directory.appending(path: "volume")
            try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
            let target = volume.appending(path: "count.json")
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "volume/count.json")
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            try await cached.save(1)
            #expect(try await cached.load() == 1)
            try await FileChangesTests.save("2", to: target)  // another process, through the target's own path
            #expect(try await eventually { try await cached.load() == 2 })
        }
    }

    @Test func reencryptingThroughALinkKeepsTheLink() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let volume = directory.appending(path: "volume")
            try FileManager.default.createDirectory(at: volume, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "volume/token.enc")
            let old = EncryptionKey.random()
            let new = EncryptionKey.random()
            try await ValueStore<Void, String>.encryptedFile(url, key: old).save("a token")
            let keyring = EncryptionKeyring(current: new, previous: [old])
            #expect(try await keyring.reencryptFile(at: url))
            #expect(try Self.isLink(url), "re-encrypting replaced the link")
            #expect(try await ValueStore<Void, String>.encryptedFile(url, key: new).load() == "a token")
        }
    }

    // MARK: - A link pointed elsewhere after a stream started

    /// Points the link at `url` to `target`, as `ln -sfn` does: a new link renamed over it.
    static func repoint(_ url: URL, to target: String) throws {
        let temporary = url.deletingLastPathComponent().appending(path: ".\(url.lastPathComponent).new")
        try FileManager.default.createSymbolicLink(atPath: temporary.path, withDestinationPath: target)
        #expect(rename(temporary.path, url.path) == 0)
    }

    /// `directory/a/n.json` holding 1, `directory/b/n.json` holding 2, and a link `directory/n.json`
    /// to the first; returns the link's URL.
    static func twoFilesAndALinkToTheFirst(in directory: URL) throws -> URL {
        for (folder, number) in [("a", 1), ("b", 2)] {
            let folder = directory.appending(path: folder)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("\(number)".utf8).write(to: folder.appending(path: "n.json"))
        }
        let url = directory.appending(path: "n.json")
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "a/n.json")
        return url
    }

    /// Points the link at `url` to `b/n.json`, which `log` then shows (2), and saves 3 there as
    /// another process, through that file's own path, which `log` shows too: the stream follows
    /// the file the link names now.
    static func pointAtBAndSave3There(_ url: URL, log: StateLog<Int>, watches: FakeWatches) async throws {
        let directory = url.deletingLastPathComponent()
        try repoint(url, to: "b/n.json")
        watches.sendChange(of: "n.json", in: directory)
        #expect(await log.waitForLast("2"))
        try FileWatchHealthTests.writeAsAnotherProcess(3, to: directory.appending(path: "b/n.json"))
        watches.sendChange(of: "n.json", in: directory.appending(path: "b"))
        #expect(await log.waitForLast("3"), "the stream follows the file the link names now")
    }

    @Test func aStreamFollowsALinkPointedIntoAnotherDirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let url = try Self.twoFilesAndALinkToTheFirst(in: directory)
            let watches = FakeWatches()
            let log = StateLog(watches.jsonFile(url, as: Int.self).changes())
            #expect(await log.waitForLast("1"))
            try await Self.pointAtBAndSave3There(url, log: log, watches: watches)
            // The file the link named before is no longer followed.
            #expect(watches.watch(of: directory.appending(path: "a")) == nil)
        }
    }

    @Test func aCacheFollowsALinkPointedIntoAnotherDirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let url = try Self.twoFilesAndALinkToTheFirst(in: directory)
            let watches = FakeWatches()
            let cached = watches.jsonFile(url, as: Int.self).cached()
            #expect(try await cached.load() == 1)
            try Self.repoint(url, to: "b/n.json")
            watches.sendChange(of: "n.json", in: directory)
            #expect(try await eventually { try await cached.load() == 2 })
            try FileWatchHealthTests.writeAsAnotherProcess(3, to: directory.appending(path: "b/n.json"))
            watches.sendChange(of: "n.json", in: directory.appending(path: "b"))
            #expect(try await eventually { try await cached.load() == 3 })
        }
    }

    @Test func aCacheFollowsALinkPointedElsewhereWithALiveWatcher() async throws {
        try await TemporaryDirectory.with { directory in
            let url = try Self.twoFilesAndALinkToTheFirst(in: directory)
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            #expect(try await cached.load() == 1)
            try Self.repoint(url, to: "b/n.json")
            #expect(try await eventually { try await cached.load() == 2 })
            try await FileChangesTests.save("3", to: directory.appending(path: "b/n.json"))  // another process
            #expect(try await eventually { try await cached.load() == 3 })
        }
    }

    @Test func aStreamFollowsALinkThatReplacedARegularFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = try Self.twoFilesAndALinkToTheFirst(in: directory)
            try FileManager.default.removeItem(at: url)
            try Data("0".utf8).write(to: url)
            let watches = FakeWatches()
            let log = StateLog(watches.jsonFile(url, as: Int.self).changes())
            #expect(await log.waitForLast("0"))
            try await Self.pointAtBAndSave3There(url, log: log, watches: watches)
            log.cancel()
            #expect(await log.waitForLast("end"))
            #expect(await eventually { watches.openWatches == 0 }, "both directories' watches are released")
        }
    }
}
