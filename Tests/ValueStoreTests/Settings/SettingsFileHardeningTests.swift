import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
            let counter = SettingsFile(url).store("counter", as: Int.self).default(0)
            try await counter.save(0)
            let runs = Calls()
            let lockWasFree = Shared<[Bool]>([])
            try await counter.update { value in
                runs.increment()
                let free = Self.fileLockIsFree(directory.appending(path: ".settings.plist.lock"))
                lockWasFree.append(free)
                if runs.value == 1 && free {
                    // Another process commits while the body runs: the body runs again on its value.
                    let writer = try HelperProcess(
                        "settings-increment", url.path(percentEncoded: false), "counter", "1")
                    #expect(writer.wait() == 0)
                }
                value += 1
            }
            #expect(lockWasFree.value.allSatisfy { $0 }, "no flock is held while the body runs")
            #expect(runs.value == 2, "the other process's commit made the body run again")
            #expect(try await SettingsFile(url).store("counter", as: Int.self).load() == 2)
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

extension SettingsFileHardeningTests {
    /// Whether another open file description can take the lock file's `flock` now.
    static func fileLockIsFree(_ url: URL) -> Bool {
        let descriptor = open(url.path(percentEncoded: false), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(descriptor, LOCK_UN)
        return true
    }
}
