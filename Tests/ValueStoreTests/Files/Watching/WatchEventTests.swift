import Foundation
import Testing

@testable import ValueStore

/// What the file watcher and the settings file report through ``ValueStoreEvent`` when they lose
/// and retry a watch: once per trouble, and once when it is over, never once per retry.
@Suite struct WatchEventTests {
    @Test func aLostWatchIsReportedAndSoIsItsReturn() async throws {
        try await TemporaryDirectory.with { directory in
            let events = ReportedEvents(about: directory)
            defer { events.disconnect() }
            let folder = directory.appending(path: "data")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let watches = FakeWatches()
            let log = StateLog(watches.jsonFile(folder.appending(path: "count.json"), as: Int.self).changes())
            #expect(await log.waitForLast("absent"))
            #expect(events.kinds.isEmpty)

            try FileManager.default.removeItem(at: folder)
            watches.send([.lost], to: folder)
            #expect(events.kinds == [.watchLost])
            let source = "directory '\(FakeWatches.path(of: folder))'"
            #expect(events.all.first?.source == source)

            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            watches.send([.entry("data", writtenInPlace: false)], to: directory)
            #expect(events.kinds == [.watchLost, .watchRestored])
            #expect(events.all.allSatisfy { $0.source == source && $0.severity == .info })
        }
    }

    @Test func aDirectoryThatCannotBeWatchedIsReportedOnceHoweverOftenItIsRetried() async throws {
        try await TemporaryDirectory.with { directory in
            let events = ReportedEvents(about: directory)
            defer { events.disconnect() }
            // Ticks far apart: the test retries by hand.
            let watches = FakeWatches(retryInterval: .seconds(3_600))
            watches.failWatches(under: directory, true)
            let log = StateLog(watches.jsonFile(directory.appending(path: "count.json"), as: Int.self).changes())
            #expect(await log.waitForLast("absent"))
            for _ in 0..<3 {
                watches.fileSystem.changes.check(onlyUnwatched: true)
            }
            #expect(events.kinds == [.watchUnavailable])
            #expect(events.all.first?.severity == .warning)

            watches.failWatches(under: directory, false)
            watches.fileSystem.changes.check(onlyUnwatched: true)
            #expect(events.kinds == [.watchUnavailable, .watchRestored])
        }
    }

    @Test func aDirectoryMissingFromTheStartIsNoTrouble() async throws {
        try await TemporaryDirectory.with { directory in
            let events = ReportedEvents(about: directory)
            defer { events.disconnect() }
            let folder = directory.appending(path: "Application Support")
            let watches = FakeWatches()
            let store = watches.jsonFile(folder.appending(path: "count.json"), as: Int.self)
            let log = StateLog(store.changes())
            #expect(await log.waitForLast("absent"))
            try await store.save(1)
            #expect(await log.waitForLast("1"))
            #expect(events.kinds.isEmpty)
        }
    }

    @Test func aSettingsFileReportsRestartingItsWatchOnceUntilItIsWatchedAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let events = ReportedEvents(about: directory)
            defer { events.disconnect() }
            let folder = directory.appending(path: "settings")
            let watches = FakeWatches()
            let settings = SettingsFile(
                folder.appending(path: "settings.plist"), options: .default, fileSystem: watches.fileSystem)
            let theme = settings.store("theme", as: String.self).optional()
            try await theme.save("dark")
            #expect(events.kinds.isEmpty)

            try FileManager.default.removeItem(at: folder)
            watches.send([.lost], to: folder)
            #expect(try await theme.load() == nil)
            #expect(try await theme.load() == nil)
            #expect(events.kinds == [.watchLost, .settingsWatchRestarted])
            let restart = try #require(events.all.last)
            #expect(restart.source == settings.label)

            // Once its directory is watched again, a later loss is reported again.
            try await theme.save("light")
            try FileManager.default.removeItem(at: folder)
            watches.send([.lost], to: folder)
            #expect(try await theme.load() == nil)
            #expect(try await theme.load() == nil)
            #expect(events.kinds.filter { $0 == .settingsWatchRestarted }.count == 2)
        }
    }

    @Test func eventsGoToEveryConnectedHandlerUntilItDisconnects() {
        let source = "test \(UUID().uuidString)"
        let first = ReportedEvents(source: source)
        let second = ReportedEvents(source: source)
        defer { second.disconnect() }
        let event = ValueStoreEvent(.listeningAgain, source: source, message: "listening again")
        ValueStoreEvent.report(event)
        first.disconnect()
        ValueStoreEvent.report(ValueStoreEvent(.cannotListen, severity: .warning, source: source, message: "down"))
        #expect(first.all == [event])
        #expect(second.kinds == [.listeningAgain, .cannotListen])
        #expect("\(event)" == "listeningAgain in \(source): listening again")
    }
}

/// The events reported about one test's directory (or source), collected from the moment it is
/// made until it disconnects: the hook is shared by every test of the process.
final class ReportedEvents: Sendable {
    private let events = Shared<[ValueStoreEvent]>([])
    private let connection = Shared<ValueStoreEvent.Connection?>(nil)

    /// Collects the events whose source contains `directory`'s path.
    convenience init(about directory: URL) {
        self.init(matching: FakeWatches.path(of: directory))
    }

    /// Collects the events whose source is `source`.
    convenience init(source: String) {
        self.init(matching: source, exactly: true)
    }

    private init(matching text: String, exactly: Bool = false) {
        let events = events
        connection.value = ValueStoreEvent.connect { event in
            if exactly ? event.source == text : event.source.contains(text) {
                events.withLock { $0.append(event) }
            }
        }
    }

    var all: [ValueStoreEvent] { events.value }
    var kinds: [ValueStoreEvent.Kind] { all.map(\.kind) }

    func disconnect() {
        connection.value?.disconnect()
    }
}
