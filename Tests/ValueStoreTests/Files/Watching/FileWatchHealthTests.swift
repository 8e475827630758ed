import Foundation
import Testing

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// The directory watch's health: a directory that is missing, deleted, moved away or cannot be
/// watched still has its changes seen, by a watch armed again or by a check of the file's identity
/// before a load answers from memory.
@Suite struct FileWatchHealthTests {
    /// Writes `number` to `url` the way another process's save does: a new file renamed over it.
    static func writeAsAnotherProcess(_ number: Int, to url: URL) throws {
        try Data("\(number)".utf8).write(to: url, options: .atomic)
    }

    // MARK: - A directory that does not exist yet

    @Test func aStreamStartedBeforeItsDirectoryExistsSeesTheFirstWriteInIt() async throws {
        try await TemporaryDirectory.with { directory in
            let folder = directory.appending(path: "Application Support/app")
            let url = folder.appending(path: "count.json")
            let log = StateLog(ValueStore<Void, Int>.jsonFile(url).changes())
            #expect(await log.waitForLast("absent"))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.writeAsAnotherProcess(42, to: url)
            #expect(await log.waitForLast("42"))
            try Self.writeAsAnotherProcess(43, to: url)
            #expect(await log.waitForLast("43"))
        }
    }

    @Test func aCacheWhoseDirectoryItsFirstSaveCreatedSeesAnotherProcessesWrites() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "Application Support/count.json")
            let file = DurableFile(url, options: .default, fileSystem: .live)
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            #expect(try await cached.optional().load() == nil)
            try await cached.save(1)
            #expect(FileChanges.shared.watcher(of: file.directory) != nil)
            #expect(try await cached.load() == 1)
            try Self.writeAsAnotherProcess(7, to: url)
            #expect(try await eventually { try await cached.load() == 7 })
        }
    }

    @MainActor @Test func aStoredValueWhoseDirectoryItsFirstSaveCreatedFollowsAnotherProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "Application Support/count.json")
            let count = await StoredValue.loaded(ValueStore<Void, Int>.jsonFile(url), default: 0)
            try await count.set(1)
            try Self.writeAsAnotherProcess(7, to: url)
            #expect(await eventually { count.value == 7 })
        }
    }

    // MARK: - A directory deleted or moved away, then made again

    @Test(arguments: ["deleted", "moved away"])
    func aDirectoryMadeAgainIsWatchedAgain(_ how: String) async throws {
        try await TemporaryDirectory.with { directory in
            let folder = directory.appending(path: "data")
            let url = folder.appending(path: "count.json")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = ValueStore<Void, Int>.jsonFile(url)
            try await store.save(1)
            let log = StateLog(store.changes())
            #expect(await log.waitForLast("1"))
            if how == "deleted" {
                try FileManager.default.removeItem(at: folder)
            } else {
                try FileManager.default.moveItem(at: folder, to: directory.appending(path: "old"))
            }
            #expect(await log.waitForLast("absent"))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.writeAsAnotherProcess(5, to: url)
            #expect(await log.waitForLast("5"))
            // A cache that starts following the file now sees later changes too.
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            #expect(try await cached.load() == 5)
            try Self.writeAsAnotherProcess(6, to: url)
            #expect(try await eventually { try await cached.load() == 6 })
            #expect(await log.waitForLast("6"))
        }
    }

    // MARK: - An overflowed queue

    #if canImport(Glibc)
    @Test func anOverflowedQueueIsAChangeToEveryEntry() {
        // inotify_event records: a 16-byte header (wd, mask, cookie, len), then the name.
        func record(watch: Int32, mask: UInt32, name: String = "") -> [UInt8] {
            var padded = Array(name.utf8)
            if !padded.isEmpty {
                padded += [UInt8](repeating: 0, count: 16 - padded.count % 16)
            }
            var bytes: [UInt8] = []
            withUnsafeBytes(of: watch.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: mask.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt32(0)) { bytes += $0 }
            withUnsafeBytes(of: UInt32(padded.count).littleEndian) { bytes += $0 }
            return bytes + padded
        }
        let buffer =
            record(watch: 1, mask: UInt32(IN_MOVED_TO), name: "a.json")
            + record(watch: -1, mask: UInt32(IN_Q_OVERFLOW))
            + record(watch: 1, mask: UInt32(IN_CLOSE_WRITE), name: "b.json")
            + record(watch: 1, mask: UInt32(IN_IGNORED))
        let events = buffer.withUnsafeBytes { DirectoryWatcher.events(in: $0) }
        #expect(
            events == [
                .entry("a.json", writtenInPlace: false), .anyEntry, .entry("b.json", writtenInPlace: true), .lost,
            ])
    }
    #endif

    @Test func anOverflowSignalsEveryObservedFileInTheDirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let watches = FakeWatches()
            try Self.writeAsAnotherProcess(1, to: directory.appending(path: "a.json"))
            var a = watches.jsonFile(directory.appending(path: "a.json"), as: Int.self).changeSignals(())
                .makeAsyncIterator()
            var b = watches.jsonFile(directory.appending(path: "b.json"), as: Int.self).changeSignals(())
                .makeAsyncIterator()
            watches.send([.anyEntry], to: directory)
            #expect(await a.next() != nil)
            #expect(await b.next() != nil)
        }
    }

    // MARK: - No watch at all

    @Test func withoutAWatchACachedHitChecksTheFileFirst() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches(retryInterval: .milliseconds(20))
            watches.failWatches(under: directory, true)
            let cached = watches.jsonFile(url, as: Int.self).cached()
            try await cached.save(1)
            #expect(try await cached.load() == 1)
            #expect(watches.watch(of: directory) == nil)
            try Self.writeAsAnotherProcess(7, to: url)
            #expect(try await cached.load() == 7)
            #expect(try await cached.load() == 7)
            // Watches free up: the registry's next retry watches the directory again.
            watches.failWatches(under: directory, false)
            #expect(await eventually { watches.watch(of: directory) != nil })
            #expect(try await cached.load() == 7)
        }
    }

    /// A degraded hit pays for one `stat` of the file and nothing of the watch: retries are the
    /// registry's, on its own tick.
    @Test func aCachedHitWithoutAWatchTriesNoWatch() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let attempts = Shared(0)
            var fileSystem = FileSystem.live
            fileSystem.changes = FileChanges(retryInterval: .seconds(3_600)) { _, _, _ in
                attempts.withLock { $0 += 1 }
                return nil  // as when no inotify instance or watch is left
            }
            let cached = Self.jsonFile(url, on: fileSystem).cached()
            try await cached.save(1)
            #expect(try await cached.load() == 1)
            let before = attempts.value
            for _ in 0..<100 {
                #expect(try await cached.load() == 1)
            }
            #expect(attempts.value == before)
            try Self.writeAsAnotherProcess(7, to: url)
            #expect(try await cached.load() == 7)
        }
    }

    // MARK: - Retried on its own

    @Test func anObserverThatNeverWritesRecoversOnceWatchesFreeUp() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches(retryInterval: .milliseconds(20))
            watches.failWatches(under: directory, true)
            let log = StateLog(watches.jsonFile(url, as: Int.self).changes())
            #expect(await log.waitForLast("absent"))
            try Self.writeAsAnotherProcess(7, to: url)
            // No write, stream or load of this process follows: the registry retries on its own,
            // and signals every file in the directory once it is watched.
            watches.failWatches(under: directory, false)
            #expect(await log.waitForLast("7"))
            try Self.writeAsAnotherProcess(8, to: url)
            watches.sendChange(of: "count.json", in: directory)
            #expect(await log.waitForLast("8"))
        }
    }

    @Test func aReleasedWatchRetriesTheUnwatchedAtOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let (starved, other) = (directory.appending(path: "a"), directory.appending(path: "b"))
            for folder in [starved, other] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            // Ticks far apart: only the release can retry within the test.
            let watches = FakeWatches(retryInterval: .seconds(3_600))
            watches.failWatches(under: starved, true)
            let url = starved.appending(path: "count.json")
            let log = StateLog(watches.jsonFile(url, as: Int.self).changes())
            #expect(await log.waitForLast("absent"))
            let otherLog = StateLog(watches.jsonFile(other.appending(path: "count.json"), as: Int.self).changes())
            #expect(await otherLog.waitForLast("absent"))
            try Self.writeAsAnotherProcess(7, to: url)
            watches.failWatches(under: starved, false)
            otherLog.cancel()
            #expect(await log.waitForLast("7"))
        }
    }

    @Test func aDirectoryReplacedByAFileAndMadeAgainIsWatchedAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let folder = directory.appending(path: "data")
            let url = folder.appending(path: "count.json")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.writeAsAnotherProcess(1, to: url)
            let fileSystem = Self.liveFileSystem(retryInterval: .milliseconds(20))
            let log = StateLog(Self.jsonFile(url, on: fileSystem).changes())
            #expect(await log.waitForLast("1"))
            // The watch is lost, and a file cannot be watched as a directory.
            try FileManager.default.removeItem(at: folder)
            try Data("not a directory".utf8).write(to: folder)
            let path = FakeWatches.path(of: folder)
            #expect(await eventually { fileSystem.changes.isUnwatched(path) })
            try FileManager.default.removeItem(at: folder)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Self.writeAsAnotherProcess(5, to: url)
            #expect(await log.waitForLast("5"))
            try Self.writeAsAnotherProcess(6, to: url)
            #expect(await log.waitForLast("6"))
        }
    }

    /// The live file system, with a registry of its own that checks its directories every
    /// `retryInterval`.
    static func liveFileSystem(retryInterval: Duration) -> FileSystem {
        var fileSystem = FileSystem.live
        fileSystem.changes = FileChanges(retryInterval: retryInterval) { directory, interest, onEvents in
            DirectoryWatcher(directory: directory, interest: interest, onEvents: onEvents)
        }
        return fileSystem
    }

    /// A JSON file store of a number over `fileSystem`.
    static func jsonFile(_ url: URL, on fileSystem: FileSystem) -> ValueStore<Void, Int> {
        ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem).coded(.json)
    }

    @Test func withoutAWatchASettingsKeyChecksTheFileFirst() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let watches = FakeWatches()
            watches.failWatches(under: directory, true)
            let theme = SettingsFile(url, options: .default, fileSystem: watches.fileSystem).store(
                "theme", as: String.self)
            try await theme.save("light")
            #expect(try await theme.load() == "light")
            let written = try PropertyListSerialization.data(
                fromPropertyList: ["theme": "dark"], format: .xml, options: 0)
            try written.write(to: url, options: .atomic)
            #expect(try await theme.load() == "dark")
        }
    }

    // MARK: - Whose write it was

    #if canImport(Glibc)
    @Test func aWriteInPlaceIsNeverTakenForThisProcesssOwn() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches()
            let store = watches.jsonFile(url, as: Int.self)
            let log = StateLog(store.changes())
            #expect(await log.waitForLast("absent"))
            try await store.save(1)
            #expect(await log.waitForLast("1"))
            // Another tool writes the same number of bytes in place within the same clock tick of
            // a file system with coarse timestamps: device, inode, size and time stay the same.
            let path = url.path(percentEncoded: false)
            var before = stat()
            #expect(stat(path, &before) == 0)
            let handle = try FileHandle(forWritingTo: url)
            try handle.write(contentsOf: Data("2".utf8))
            try handle.close()
            var times = [before.st_atim, before.st_mtim]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            watches.send([.entry("count.json", writtenInPlace: true)], to: directory)
            #expect(await log.waitForLast("2"))
        }
    }
    #endif
}
