import Foundation
import Synchronization
import Testing
import ValueStoreTestSupport

@testable import ValueStore

/// Transactions that end, exact values, and streams that wake only for their own key.
@Suite struct SettingsFileHardeningTests {
    // MARK: - A transaction ends when it commits

    @Test func aWriteFromATaskThatOutlivesAnUpdateCommitsOnItsOwn() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let settings = SettingsFile(url)
            let launches = settings.store("launches", as: Int.self).default(0)
            let note = settings.store("note", as: String.self)
            let (committed, commit) = AsyncStream<Void>.makeStream()
            let late = Shared<Task<Void, any Error>?>(nil)
            try await launches.update { count in
                count += 1
                late.value = Task {
                    for await _ in committed { break }  // after the update returned
                    try await note.save("written late")
                }
            }
            commit.yield()
            try await #require(late.value).value
            #expect(try await SettingsFile(url).store("note", as: String.self).load() == "written late")
            #expect(try await SettingsFile(url).store("launches", as: Int.self).load() == 1)
        }
    }

    @Test func aStreamStartedInsideAnUpdateSeesTheFilesOwnCommits() async throws {
        try await TemporaryDirectory.with { directory in
            let settings = SettingsFile(directory.appending(path: "settings.plist"))
            let launches = settings.store("launches", as: Int.self).default(0)
            let theme = settings.store("theme", as: String.self)
            let log = Shared<StateLog<String>?>(nil)
            try await launches.update { count in
                count += 1
                log.value = StateLog(theme.changes())
            }
            let states = try #require(log.value)
            #expect(await states.waitForLast("absent"))
            try await theme.save("dark")
            #expect(await states.waitForLast("dark"))
        }
    }

    // MARK: - No lock while user code runs

    @Test(.timeLimit(.minutes(1)))
    func aWriteThroughASecondObjectForTheFileInsideAnUpdateJoinsIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let first = SettingsFile(url)
            let second = SettingsFile(url)
            let launches = first.store("launches", as: Int.self).default(0)
            let lastLaunch = second.store("lastLaunch", as: String.self)
            #expect(try await lastLaunch.optional().load() == nil)  // the second object's memory
            let runs = Calls()
            try await launches.update { count in
                runs.increment()
                count += 1
                try await lastLaunch.save("launch \(count)")
            }
            #expect(runs.value == 1, "the write joined the update instead of making it run again")
            #expect(try await lastLaunch.load() == "launch 1", "the second object knows its write committed")
            let reopened = SettingsFile(url)
            #expect(try await reopened.store("launches", as: Int.self).load() == 1)
            #expect(try await reopened.store("lastLaunch", as: String.self).load() == "launch 1")
        }
    }

    @Test func noFileLockIsHeldWhileAnUpdateBodyRunsAndAConflictRunsItAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            // Which descriptors of this process hold a file lock, as the file system sees them:
            // probing the lock from here would also see a descriptor a process spawned by
            // another test inherited for a moment, between its fork and its exec.
            let locks = LockTracking()
            let settings = SettingsFile(url, options: .default, fileSystem: locks.fileSystem)
            let counter = settings.store("counter", as: Int.self).default(0)
            try await counter.save(0)
            let runs = Calls()
            let lockWasHeld = Shared<[Bool]>([])
            try await counter.update { value in
                runs.increment()
                lockWasHeld.append(locks.isHeld)
                if runs.value == 1 {
                    // Another process commits while the body runs: the body runs again on its value.
                    let writer = try HelperProcess(
                        "settings-increment", url.path(percentEncoded: false), "counter", "1")
                    #expect(await writer.exitStatus() == 0)
                }
                value += 1
            }
            #expect(lockWasHeld.value == [false, false], "no flock is held while the body runs")
            #expect(runs.value == 2, "the other process's commit made the body run again")
            #expect(try await SettingsFile(url).store("counter", as: Int.self).load() == 2)
        }
    }

    // MARK: - A write from a task started in an update lands or throws

    @Test func aWriteFromATaskStartedInAnUpdateBodyThatRunsAgainLandsOrThrows() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let settings = SettingsFile(url)
            let counter = settings.store("counter", as: Int.self).default(0)
            let note = settings.store("note", as: String.self)
            let elsewhere = SettingsFile(url).store("counter", as: Int.self)
            let runs = Calls()
            let noteSave = Shared<Result<Void, any Error>?>(nil)
            try await counter.update { value in
                runs.increment()
                if runs.value == 1 {
                    noteSave.value = await Task { try await note.save("written") }.result
                    // Another writer commits meanwhile (detached: it inherits no transaction), so
                    // the transaction starts over from the file and the body runs again.
                    _ = try await Task.detached { try await elsewhere.save(10) }.value
                }
                value += 1
            }
            #expect(runs.value == 2)
            let reopened = SettingsFile(url)
            #expect(try await reopened.store("counter", as: Int.self).load() == 11)
            let landed = try await reopened.store("note", as: String.self).optional().load() == "written"
            let result = try #require(noteSave.value)
            #expect(result.succeeded == landed, "a save that returned success is in the commit that landed")
            #expect(result.errorCode == .nestedWrite, "a write from another task is refused while the body runs")
        }
    }

    @Test func aWriteFromATaskStartedInAnUpdateBodyThatThrowsLandsOrThrows() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let settings = SettingsFile(url)
            let counter = settings.store("counter", as: Int.self).default(0)
            let note = settings.store("note", as: String.self)
            let noteSave = Shared<Result<Void, any Error>?>(nil)
            await #expect(throws: Boom()) {
                try await counter.update { value in
                    noteSave.value = await Task { try await note.save("written") }.result
                    value += 1
                    throw Boom()
                }
            }
            let reopened = SettingsFile(url)
            let landed = try await reopened.store("note", as: String.self).optional().load() == "written"
            let result = try #require(noteSave.value)
            #expect(result.succeeded == landed, "a save that returned success is in the file")
            #expect(result.errorCode == .nestedWrite)
            #expect(try await reopened.store("counter", as: Int.self).optional().load() == nil)
        }
    }

    // MARK: - Updates of one key take turns

    @Test func updatesOfOneKeyInOneProcessTakeTurns() async throws {
        try await TemporaryDirectory.with { directory in
            let settings = SettingsFile(directory.appending(path: "settings.plist"), options: .cache)
            let counter = settings.store("counter", as: Int.self).default(0)
            let bodiesPerUpdate = Shared<[Int]>([])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        for _ in 0..<100 {
                            let bodies = Calls()
                            try await counter.update { value in
                                bodies.increment()
                                value += 1
                            }
                            bodiesPerUpdate.append(bodies.value)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counts = bodiesPerUpdate.value
            let total = counts.reduce(0, +)
            #expect(try await counter.load() == 800)
            #expect(total <= 1_200, "at most 1.5 bodies per update on average; \(total) ran")
            #expect((counts.max() ?? 0) <= 10, "no update runs more than 10 times; the worst ran \(counts.max() ?? 0)")
        }
    }

    // MARK: - No lock while the file is encoded

    @Test func noFileLockIsHeldWhileTheEntriesAreEncoded() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let locks = LockTracking()
            let lockWasHeld = Shared<[Bool]>([])
            let settings = SettingsFile(url, options: .default, fileSystem: locks.fileSystem) { entries in
                lockWasHeld.append(locks.isHeld)
                return BinaryPropertyList.data(of: entries)
            }
            try await settings.store("theme", as: String.self).save("dark")
            try await settings.batch { batch in try batch.set(16, for: "fontSize") }
            try await settings.store("fontSize", as: Int.self).update { $0 += 1 }
            #expect(lockWasHeld.value == [false, false, false], "a save, a batch and an update encode unlocked")
            #expect(try await SettingsFile(url).store("fontSize", as: Int.self).load() == 17)
        }
    }

    @Test func aSaveThatFindsTheFileChangedAfterEncodingAppliesItselfToTheNewFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let encodings = Calls()
            let settings = SettingsFile(url, options: .default, fileSystem: .live) { entries in
                encodings.increment()
                if encodings.value == 2 {
                    // The file is replaced after this encoding, before the locks are taken, as
                    // another process's commit replaces it: what it held, and "counter" set to 1.
                    // Written here, at once: waiting for a process would hold this thread.
                    do {
                        var onDisk = try BinaryPropertyList.dictionary(from: Data(contentsOf: url))
                        onDisk[PropertyListKey("counter")] = .integer(1)
                        try BinaryPropertyList.data(of: onDisk).write(to: url, options: .atomic)
                    } catch {
                        Issue.record(error, "the other writer could not replace the file")
                    }
                }
                return BinaryPropertyList.data(of: entries)
            }
            try await settings.store("theme", as: String.self).save("dark")
            try await settings.store("fontSize", as: Int.self).save(16)
            #expect(encodings.value == 3, "encoded again, under the locks, on the file as it is now")
            let reopened = SettingsFile(url)
            #expect(try await reopened.store("counter", as: Int.self).load() == 1, "the other process's write is kept")
            #expect(try await reopened.store("fontSize", as: Int.self).load() == 16)
            #expect(try await reopened.store("theme", as: String.self).load() == "dark")
        }
    }

    // MARK: - A key's stream wakes for that key only

    @Test func aKeysStreamWakesOnlyWhenThatKeyChanges() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let settings = SettingsFile(url)
            let theme = settings.store("theme", as: String.self)
            let fontSize = settings.store("fontSize", as: Int.self)
            try await theme.save("dark")
            try await fontSize.save(16)
            #expect(try await fontSize.load() == 16)

            // This file's own commit.
            let themeSignals = theme.changeSignals(())
            var fontSizeSignals = fontSize.changeSignals(())
            try await theme.save("light")
            #expect(await hasSignal(themeSignals))
            #expect(await !hasSignal(fontSizeSignals), "a commit to another key wakes nobody here")

            // Another object's commit, which arrives through the watch.
            fontSizeSignals = fontSize.changeSignals(())
            let themeStates = StateLog(theme.changes())
            #expect(await themeStates.waitForLast("light"))
            try await SettingsFile(url).store("theme", as: String.self).save("sepia")
            #expect(await themeStates.waitForLast("sepia"))
            #expect(await !hasSignal(fontSizeSignals), "another process's change to another key neither")

            try await SettingsFile(url).store("fontSize", as: Int.self).save(17)
            let fontSizeStates = StateLog(fontSize.changes())
            #expect(await fontSizeStates.waitForLast("17"), "a change to the key itself does")
        }
    }

    // MARK: - Every value exact

    @Test func datesKeepTheirFractionalSeconds() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let when = Date(timeIntervalSinceReferenceDate: 785_000_123.456_789)
            let unknown: [String: Any] = ["otherToolsDate": when, "ratio": 0.1 + 0.2]
            try PropertyListSerialization.data(fromPropertyList: unknown, format: .binary, options: 0).write(to: url)
            let settings = SettingsFile(url)
            try await settings.store("lastSync", as: Date.self).save(when)
            let reopened = SettingsFile(url)
            #expect(try await reopened.store("lastSync", as: Date.self).load() == when)
            let nodes = try SettingsFileTests.nodes(at: url)
            #expect(nodes["otherToolsDate"] == .date(when), "another tool's date keeps its exact value")
            #expect(nodes["ratio"] == .real(0.1 + 0.2))
        }
    }

    @Test func anXMLFileWrittenByEarlierVersionsIsStillRead() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let entries: [String: Any] = ["theme": "dark", "fontSize": 16]
            try PropertyListSerialization.data(fromPropertyList: entries, format: .xml, options: 0).write(to: url)
            let settings = SettingsFile(url)
            #expect(try await settings.store("theme", as: String.self).load() == "dark")
            try await settings.store("fontSize", as: Int.self).save(17)
            var format = PropertyListSerialization.PropertyListFormat.xml
            _ = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: &format)
            #expect(format == .binary, "the next commit writes the binary format")
            #expect(try await SettingsFile(url).store("theme", as: String.self).load() == "dark")
        }
    }
}

/// The live file system, knowing which of this process's descriptors hold a file lock.
final class LockTracking: Sendable {
    private let held = Mutex<Set<Int32>>([])

    /// Whether some descriptor holds a lock now.
    var isHeld: Bool { held.withLock { !$0.isEmpty } }

    var fileSystem: FileSystem {
        var fileSystem = FileSystem.live
        fileSystem.lock = { descriptor, wait in
            let locked = try FileSystem.live.lock(descriptor, wait)
            if locked {
                self.held.withLock { _ = $0.insert(descriptor) }
            }
            return locked
        }
        fileSystem.close = { descriptor in
            // Forgotten first: once closed, the number may name another file at once.
            self.held.withLock { _ = $0.remove(descriptor) }
            try FileSystem.live.close(descriptor)
        }
        return fileSystem
    }
}

extension Result {
    var succeeded: Bool {
        if case .success = self { true } else { false }
    }

    /// The code of the `ValueStoreError` it failed with, if any.
    var errorCode: ValueStoreError.Code? {
        if case .failure(let error as ValueStoreError) = self { error.code } else { nil }
    }
}
