import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// File stores: writes by other stores over the same path and by other processes arrive through
/// `changes()`, a process's own write arrives once, and the watch is released with the last
/// stream.
@Suite struct FileChangesTests {
    /// Saves `number` to the JSON file at `url` from another process (`"remove"` removes it).
    static func save(_ number: String, to url: URL) async throws {
        let helper = try HelperProcess("save-json", url.path(percentEncoded: false), number)
        #expect(await helper.exitStatus() == 0)
    }

    @Test func storesOverTheSamePathSeeEachOthersWrites() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let observed = ValueStore<Void, Int>.jsonFile(url)
            let writer = ValueStore<Void, Int>.jsonFile(url).cached()
            var states = observed.changes().makeAsyncIterator()
            #expect(await states.next()?.summary == "absent")
            try await writer.save(1)
            #expect(await states.next()?.summary == "1")
            try await writer.update { $0 += 1 }
            #expect(await states.next()?.summary == "2")
            try await writer.remove()
            #expect(await states.next()?.summary == "absent")
        }
    }

    @Test func aChangeByAnotherProcessArrives() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let log = StateLog(ValueStore<Void, Int>.jsonFile(url).default(0).changes())
            #expect(await log.waitForLast("0"))
            try await Self.save("42", to: url)
            #expect(await log.waitForLast("42"))
            try await Self.save("remove", to: url)
            #expect(await log.waitForLast("0"))
        }
    }

    @Test func aDamagedFileArrivesAsAFailureAndALaterGoodWriteAsAValue() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let store = ValueStore<Void, Int>.jsonFile(url)
            try await store.save(1)
            let log = StateLog(store.changes())
            #expect(await log.waitForLast("1"))
            try Data("{ not json".utf8).write(to: url)  // another tool, in place
            #expect(await log.waitForLast("failed(corrupted)"))
            try await store.save(2)
            #expect(await log.waitForLast("2"))
        }
    }

    /// Every way a name appears signals it: a rename over it, and `link(2)` and `symlink(2)`,
    /// which the watch sees only as a creation.
    @Test(arguments: ["link", "symlink"])
    func aFileThatAppearsThroughALinkArrives(_ how: String) async throws {
        try await TemporaryDirectory.with { directory in
            let folder = directory.appending(path: "watched")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let url = folder.appending(path: "count.json")
            let log = StateLog(ValueStore<Void, Int>.jsonFile(url).changes())
            #expect(await log.waitForLast("absent"))
            let source = directory.appending(path: "made.json")
            try Data("9".utf8).write(to: source)
            let (from, to) = (source.path(percentEncoded: false), url.path(percentEncoded: false))
            #expect((how == "link" ? link(from, to) : symlink(from, to)) == 0)
            #expect(await log.waitForLast("9"))
        }
    }

    /// One inotify instance serves the whole process, with a watch per directory: a thousand
    /// observed directories are all watched under the default limit of 128 instances per user.
    @Test func aThousandWatchedDirectoriesAreAllWatched() async throws {
        try await TemporaryDirectory.with { directory in
            let urls = try (0..<1_000).map { index in
                let folder = directory.appending(path: "d\(index)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                return folder.appending(path: "count.json")
            }
            let streams = urls.dropLast().map { ValueStore<Void, Int>.jsonFile($0).changeSignals(()) }
            let log = StateLog(ValueStore<Void, Int>.jsonFile(urls.last!).changes())
            #expect(await log.waitForLast("absent"))
            #if os(Linux)
            let instances = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { name in
                // A descriptor closed since the listing names nothing.
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))
                    == "anon_inode:inotify"
            }
            #expect(instances == 1)
            #endif
            try await Self.save("42", to: urls.last!)
            #expect(await log.waitForLast("42"))
            _ = streams
        }
    }

    @Test func aWriteOfThisProcessIsSignalledOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches()
            // Two streams of the file: the first ends to show it holds no signal, the second goes on.
            let once = watches.jsonFile(url, as: Int.self).changeSignals(())
            var later = watches.jsonFile(url, as: Int.self).changeSignals(()).makeAsyncIterator()
            var signals = once.makeAsyncIterator()
            try await watches.jsonFile(url, as: Int.self).save(1)
            #expect(await signals.next() != nil)
            #expect(await later.next() != nil)
            // The watcher reports the same write: this process's own, already signalled. The
            // registry has handled it when `sendChange` returns.
            watches.sendChange(of: "count.json", in: directory)
            #expect(await !hasSignal(once))
            // Another process's write comes after it in the directory's event queue.
            try FileWatchHealthTests.writeAsAnotherProcess(2, to: url)
            watches.sendChange(of: "count.json", in: directory)
            #expect(await later.next() != nil)
        }
    }

    @Test func leavingTheLoopReleasesTheWatch() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches()
            let path = DurableFile(url, options: .default, fileSystem: watches.fileSystem)
            let store = watches.jsonFile(url, as: Int.self).default(0)
            var watcher: (any DirectoryWatch)?
            for await state in store.changes() {
                #expect(state.summary == "0")
                watcher = watches.fileSystem.changes.watcher(of: path.directory)
                break
            }
            let released = try #require(watcher)
            #expect(!watches.fileSystem.changes.isObserved(path.path))
            #expect(watches.fileSystem.changes.watcher(of: path.directory) == nil)
            #expect(released.isClosed)
        }
    }

    @Test func cancellingTheTaskReleasesTheWatch() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let path = DurableFile(url, options: .default, fileSystem: .live)
            let log = StateLog(ValueStore<Void, Int>.jsonFile(url).changes())
            #expect(await log.waitForLast("absent"))
            let watcher = try #require(FileChanges.shared.watcher(of: path.directory))
            log.cancel()
            #expect(await log.waitForLast("end"))
            #expect(await eventually { !FileChanges.shared.isObserved(path.path) })
            #expect(await eventually { watcher.isClosed })
        }
    }

    @Test func oneWatchServesEveryStreamInADirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let watches = FakeWatches()
            var a = watches.jsonFile(directory.appending(path: "a.json"), as: Int.self).changes().makeAsyncIterator()
            var b = watches.jsonFile(directory.appending(path: "b.json"), as: Int.self).changes().makeAsyncIterator()
            _ = await a.next()
            _ = await b.next()
            #expect(watches.openWatches == 1)
            let watcher = try #require(watches.watch(of: directory))
            a = ValueStore<Void, Int>.inMemory().changes().makeAsyncIterator()
            #expect(watches.watch(of: directory) === watcher)
            #expect(!watcher.isClosed)
            b = ValueStore<Void, Int>.inMemory().changes().makeAsyncIterator()
            #expect(await eventually { watcher.isClosed })
            _ = (a, b)
        }
    }

    @Test func manySubscriptionsLeaveNothingBehind() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let file = DurableFile(url, options: .default, fileSystem: .live)
            let store = ValueStore<Void, Int>.jsonFile(url).default(0)
            for value in 0..<50 {
                var states = store.changes().makeAsyncIterator()
                #expect(await states.next()?.summary == "\(value)")
                try await store.save(value + 1)
                #expect(await states.next()?.summary == "\(value + 1)")
            }
            #expect(!FileChanges.shared.isObserved(file.path))
            #expect(FileChanges.shared.watcher(of: file.directory) == nil)
        }
    }

    @Test func aCachedStoreReleasesItsWatchWhenItGoesAway() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches()
            let file = DurableFile(url, options: .default, fileSystem: watches.fileSystem)
            var cached: ValueStore<Void, Int>? = watches.jsonFile(url, as: Int.self).cached()
            #expect(try await cached?.optional().load() == .some(nil))
            let watcher = try #require(watches.watch(of: directory))
            cached = nil
            #expect(await eventually { watcher.isClosed })
            #expect(!watches.fileSystem.changes.isObserved(file.path))
        }
    }

    @Test func cachedSeesAWriteByAnotherProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            try await cached.save(1)
            #expect(try await cached.load() == 1)
            try await Self.save("7", to: url)
            #expect(try await eventually { try await cached.load() == 7 })
        }
    }

    @Test func cachedSeesAWriteByAnotherStoreInThisProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            #expect(try await cached.optional().load() == nil)
            try await ValueStore<Void, Int>.jsonFile(url).save(3)
            #expect(try await eventually { try await cached.optional().load() == 3 })
        }
    }

    @Test func anEncryptedFileReportsWritesByAnotherStore() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "secret")
            let key = EncryptionKey.random()
            let writer = ValueStore<Void, String>.encryptedFile(url, key: key)
            var states = ValueStore<Void, String>.encryptedFile(url, key: key).changes().makeAsyncIterator()
            #expect(await states.next()?.summary == "absent")
            try await writer.save("sk_1")
            #expect(await states.next()?.summary == "sk_1")
        }
    }

    @Test func anEncryptedFileBehindALockedVaultStillFollowsTheFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "secret")
            let key = EncryptionKey.random()
            let vault = KeyVault()
            var states = ValueStore<Void, String>.encryptedFile(url, vault: vault).changes().makeAsyncIterator()
            #expect(await states.next()?.summary == "failed(locked)")
            try await ValueStore<Void, String>.encryptedFile(url, key: key).save("sk_1")
            #expect(await states.next()?.summary == "failed(locked)")
            vault.unlock(with: key)
            try await ValueStore<Void, String>.encryptedFile(url, key: key).save("sk_2")
            #expect(await states.next()?.summary == "sk_2")
        }
    }
}
