import Foundation
import Observation
import Testing

@testable import ValueStore

/// `StoredValue`: shows the store's value, saves what is set, follows changes, and never writes
/// over data it could not read.
@MainActor @Suite struct StoredValueTests {
    /// A store whose loads and saves can be made to fail, counting its writes.
    static func flaky(
        _ base: ValueStore<Void, Int>, loadFails: Shared<Bool>, saveFails: Shared<Bool>, writes: Calls
    ) -> ValueStore<Void, Int> {
        ValueStore<Void, Int>(
            label: "flaky",
            load: { _ in
                if loadFails.value { throw ValueStoreError(.corrupted, store: "flaky", reason: "test") }
                return try await base.load()
            },
            save: { value, _ in
                writes.increment()
                if saveFails.value { throw ValueStoreError(.io, store: "flaky", reason: "disk full") }
                return try await base.save(value)
            },
            remove: { _ in
                writes.increment()
                try await base.remove()
            },
            changeSignals: base.changeSignals
        )
    }

    @Test func startsWithTheDefaultThenShowsTheStoredValue() async throws {
        let stored = StoredValue(ValueStore<Void, Int>.inMemory(5), default: 0)
        #expect(stored.value == 0)
        #expect(await eventually { stored.value == 5 })
        #expect(stored.error == nil)
    }

    @Test func loadedShowsTheStoredValueAtOnce() async throws {
        let stored = await StoredValue.loaded(ValueStore<Void, Int>.inMemory(5), default: 0)
        #expect(stored.value == 5)
        let empty = await StoredValue.loaded(ValueStore<Void, Int>.inMemory(), default: 3)
        #expect(empty.value == 3)
    }

    @Test func settingShowsAtOnceAndSavesInTheBackground() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        let stored = await StoredValue.loaded(store, default: 0)
        stored.value = 2
        stored.value = 3
        #expect(stored.value == 3)
        #expect(try await eventually { try await store.load() == 3 })
        #expect(stored.value == 3)
    }

    @Test func setReturnsOnceStored() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        let stored = await StoredValue.loaded(store, default: 0)
        try await stored.set(4)
        #expect(try await store.load() == 4)
        #expect(stored.value == 4)
    }

    @Test func followsChangesMadeElsewhere() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        let stored = await StoredValue.loaded(store, default: 0)
        try await store.save(9)
        #expect(await eventually { stored.value == 9 })
        try await store.remove()
        #expect(await eventually { stored.value == 0 })
    }

    @Test func followsAnotherProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let stored = await StoredValue.loaded(ValueStore<Void, Int>.jsonFile(url), default: 0)
            try await FileChangesTests.save("12", to: url)
            #expect(await eventually { stored.value == 12 })
        }
    }

    @Test func aFailedSaveSetsErrorAndShowsWhatTheStoreHolds() async throws {
        let saveFails = Shared(true)
        let store = Self.flaky(.inMemory(1), loadFails: Shared(false), saveFails: saveFails, writes: Calls())
        let stored = await StoredValue.loaded(store, default: 0)
        stored.value = 2
        #expect(stored.value == 2)
        #expect(await eventually { stored.error != nil && stored.value == 1 })
        await #expect(throws: ValueStoreError.self) { try await stored.set(3) }
        #expect(stored.value == 1)
        saveFails.value = false
        try await stored.set(3)
        #expect(stored.error == nil)
    }

    @Test func neverWritesOverDataItCouldNotRead() async throws {
        let loadFails = Shared(true)
        let writes = Calls()
        let store = Self.flaky(.inMemory(1), loadFails: loadFails, saveFails: Shared(false), writes: writes)
        let stored = await StoredValue.loaded(store, default: 0)
        #expect((stored.error as? ValueStoreError)?.code == .corrupted)
        #expect(stored.value == 0)
        stored.value = 5
        #expect(stored.value == 0)
        await #expect(throws: ValueStoreError.self) { try await stored.set(5) }
        await #expect(throws: ValueStoreError.self) { try await stored.update { $0 += 1 } }
        #expect(writes.value == 0)
        loadFails.value = false
        await stored.reload()
        #expect(stored.error == nil)
        #expect(stored.value == 1)
        // `set` writes only after every save queued before it has landed: had the refused
        // settings queued one, it would count here.
        try await stored.set(6)
        #expect(writes.value == 1)
    }

    @Test func aValueSetBeforeTheFirstLoadNeverOverwritesUnreadableData() async throws {
        let writes = Calls()
        let store = Self.flaky(.inMemory(1), loadFails: Shared(true), saveFails: Shared(false), writes: writes)
        let stored = StoredValue(store, default: 0)
        stored.value = 5
        #expect(await eventually { (stored.error as? ValueStoreError)?.code == .corrupted })
        await #expect(throws: ValueStoreError.self) { try await stored.set(6) }
        #expect(writes.value == 0)
    }

    /// A store over `base` whose `update` throws `failure` while `updateFails` holds, counting
    /// its loads and writes. Loads always read `base`, as a cache that answers from memory does
    /// while its update reads the file; nothing signals the failure.
    static func failingUpdate(
        _ base: ValueStore<Void, Int>, failure: ValueStoreError, updateFails: Shared<Bool>, loads: Calls,
        writes: Calls = Calls()
    ) -> ValueStore<Void, Int> {
        ValueStore<Void, Int>(
            label: "failing update",
            load: { _ in
                loads.increment()
                return try await base.load()
            },
            save: { value, _ in
                writes.increment()
                return try await base.save(value)
            },
            remove: { _ in try await base.remove() },
            update: { _, body in
                if updateFails.value { throw failure }
                return try await base.update((), body)
            },
            changeSignals: base.changeSignals
        )
    }

    /// Waits until the first state the follower read is shown: `loaded` read once, the follower
    /// once more, on the main actor this test shares.
    static func followerStarted(_ loads: Calls) async -> Bool {
        await eventually { loads.value == 2 }
    }

    @Test func aFailureToReadThatArrivesDuringASaveMakesItUnwritable() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let file = ValueStore<Void, Int>.jsonFile(url)
            try await file.save(1)
            let saving = Stall.firstSave(of: file)
            let stored = await StoredValue.loaded(saving.store, default: 0)
            stored.value = 2
            await saving.reached()  // 2 is written; the save has not returned yet
            // Another store over the same file writes what nobody can decode.
            try await ValueStore<Void, Data>.file(url).save(Data("damaged".utf8))
            #expect(await eventually { stored.error != nil })
            saving.resume()
            stored.value = 3
            await #expect(throws: ValueStoreError.self) { try await stored.set(4) }
            await #expect(throws: ValueStoreError.self) { try await stored.update { $0 += 1 } }
            #expect(try Data(contentsOf: url) == Data("damaged".utf8))
            #expect(stored.value == 2)
        }
    }

    @Test func aValueThatArrivesDuringASaveIsShownOnceTheSaveEnds() async throws {
        let other = ValueStore<Void, Int>.inMemory(1)  // another store over the same box
        let lastRead = Shared<Int?>(nil)
        var reading = other
        reading.load = { environment in
            let value = try await other.load(environment)
            lastRead.value = value
            return value
        }
        reading.loadImmediately = nil
        let saving = Stall.firstSave(of: reading)
        let stored = await StoredValue.loaded(saving.store, default: 0)
        stored.value = 2
        await saving.reached()  // 2 is written; the save has not returned yet
        try await other.save(7)
        // The follower read 7 on the main actor, which this test shares, while the save was in
        // flight; no other change follows it.
        #expect(await eventually { lastRead.value == 7 })
        saving.resume()
        #expect(await eventually { stored.value == 7 })
        #expect(stored.error == nil)
    }

    @Test func anUpdateThatCouldNotReadBlocksLaterWrites() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let updateFails = Shared(false)
        let (loads, writes) = (Calls(), Calls())
        let corrupted = ValueStoreError(.corrupted, store: "file", reason: "test")
        let store = Self.failingUpdate(base, failure: corrupted, updateFails: updateFails, loads: loads, writes: writes)
        let stored = await StoredValue.loaded(store, default: 0)
        #expect(await Self.followerStarted(loads))
        updateFails.value = true  // the file is damaged, and no change is signalled
        await #expect(throws: ValueStoreError.self) { try await stored.update { $0 += 1 } }
        #expect((stored.error as? ValueStoreError)?.code == .corrupted)
        stored.value = 5
        #expect(stored.value == 1)
        await #expect(throws: ValueStoreError.self) { try await stored.set(5) }
        #expect(writes.value == 0)
        #expect(try await base.load() == 1)
        updateFails.value = false
        await stored.reload()  // reads valid data: writable again
        #expect(stored.error == nil)
        try await stored.update { $0 += 1 }
        #expect(try await base.load() == 2)
    }

    @Test func aSaveThatCouldNotReadBlocksLaterWrites() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let (loads, saves) = (Calls(), Calls())
        let store = ValueStore<Void, Int>(
            label: "merging",
            load: { _ in
                loads.increment()
                return try await base.load()  // answered from memory
            },
            save: { _, _ in
                saves.increment()  // reads the file to merge into it, and finds it damaged
                throw ValueStoreError(.corrupted, store: "merging", reason: "test")
            },
            remove: { _ in try await base.remove() },
            changeSignals: base.changeSignals
        )
        let stored = await StoredValue.loaded(store, default: 0)
        #expect(await Self.followerStarted(loads))
        await #expect(throws: ValueStoreError.self) { try await stored.set(2) }
        #expect(stored.value == 1)
        stored.value = 3
        #expect(stored.value == 1)
        await #expect(throws: ValueStoreError.self) { try await stored.set(4) }
        #expect(saves.value == 1)
    }

    @Test(arguments: [ValueStoreError.Code.io, .encodingFailed])
    func aWriteThatFailsOverReadableDataLeavesItWritable(code: ValueStoreError.Code) async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let loads = Calls()
        let failure = ValueStoreError(code, store: "file", reason: "disk full")
        let store = Self.failingUpdate(base, failure: failure, updateFails: Shared(true), loads: loads)
        let stored = await StoredValue.loaded(store, default: 0)
        #expect(await Self.followerStarted(loads))
        await #expect(throws: ValueStoreError.self) { try await stored.update { $0 += 1 } }
        #expect((stored.error as? ValueStoreError)?.code == code)
        try await stored.set(5)
        #expect(try await base.load() == 5)
        #expect(stored.error == nil)
    }

    @Test func aSaveWhoseReadAfterwardsFailsMakesItUnwritable() async throws {
        let loadFails = Shared(false)
        let saveFails = Shared(true)
        let writes = Calls()
        let store = Self.flaky(.inMemory(1), loadFails: loadFails, saveFails: saveFails, writes: writes)
        let stored = await StoredValue.loaded(store, default: 0)
        loadFails.value = true
        await #expect(throws: ValueStoreError.self) { try await stored.set(2) }
        #expect((stored.error as? ValueStoreError)?.code == .corrupted)
        saveFails.value = false
        await #expect(throws: ValueStoreError.self) { try await stored.set(3) }
        #expect(writes.value == 1)
    }

    @Test func anUpdateBodysErrorIsOnlyRethrown() async throws {
        struct Declined: Error {}
        let base = ValueStore<Void, Int>.inMemory(1)
        let loads = Calls()
        let store = Self.failingUpdate(base, failure: ValueStoreError(.io), updateFails: Shared(false), loads: loads)
        let stored = await StoredValue.loaded(store, default: 0)
        #expect(await Self.followerStarted(loads))
        await #expect(throws: Declined.self) { try await stored.update { _ in throw Declined() } }
        #expect(stored.error == nil)
        try await stored.set(2)
        #expect(try await base.load() == 2)
    }

    @Test func settingNilRemovesAnOptionalValue() async throws {
        let store = ValueStore<Void, Int?>.inMemory(3)
        let stored = await StoredValue.loaded(store, default: nil)
        #expect(stored.value == 3)
        stored.value = nil
        #expect(
            try await eventually {
                do {
                    _ = try await store.load()
                    return false
                } catch ValueStoreError.notFound {
                    return true
                }
            })
        try await stored.set(4)
        try await stored.set(nil)
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }

    @Test func updateIsAtomicThroughTheStore() async throws {
        let store = ValueStore<Void, Int>.inMemory()
        let first = await StoredValue.loaded(store, default: 0)
        let second = await StoredValue.loaded(store, default: 0)
        await withThrowingTaskGroup { group in
            for index in 0..<100 {
                let stored = index.isMultiple(of: 2) ? first : second
                group.addTask { try await stored.update { $0 += 1 } }
            }
        }
        #expect(try await store.load() == 100)
        #expect(await eventually { first.value == 100 && second.value == 100 })
    }

    @Test func observersSeeEachChange() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        let stored = await StoredValue.loaded(store, default: 0)
        let changed = Shared(false)
        withObservationTracking {
            _ = stored.value
        } onChange: {
            changed.value = true
        }
        try await store.save(2)
        #expect(await eventually { changed.value })
        #expect(stored.value == 2)
    }

    @Test func observersSeeTheError() async throws {
        let loadFails = Shared(false)
        let store = Self.flaky(.inMemory(1), loadFails: loadFails, saveFails: Shared(false), writes: Calls())
        let stored = await StoredValue.loaded(store, default: 0)
        let changed = Shared(false)
        withObservationTracking {
            _ = stored.error
        } onChange: {
            changed.value = true
        }
        loadFails.value = true
        await stored.reload()
        #expect(changed.value)
        #expect(stored.error != nil)
    }

    @Test func goingAwayReleasesTheWatch() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let file = DurableFile(url, options: .default, fileSystem: .live)
            var stored: StoredValue<Int>? = await StoredValue.loaded(.jsonFile(url), default: 0)
            weak let released = stored
            #expect(await eventually { FileChanges.shared.watcher(of: file.directory) != nil })
            let watcher = try #require(FileChanges.shared.watcher(of: file.directory))
            #expect(stored?.value == 0)
            stored = nil
            #expect(released == nil)
            #expect(await eventually { watcher.isClosed })
            #expect(!FileChanges.shared.isObserved(file.path))
        }
    }
}
