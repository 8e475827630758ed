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
            try FileChangesTests.save("12", to: url)
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
        // Proving that no write comes needs a wait: a refused set starts no task to await.
        try await Task.sleep(for: .milliseconds(20))
        #expect(writes.value == 0)
        loadFails.value = false
        await stored.reload()
        #expect(stored.error == nil)
        #expect(stored.value == 1)
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
