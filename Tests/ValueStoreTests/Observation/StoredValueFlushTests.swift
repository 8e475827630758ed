import Foundation
import Observation
import Testing

@testable import ValueStore

/// `StoredValue.flush()` and `isSaving`: values set in a burst share writes, and `flush()`
/// returns once the last of them is durable, or throws that write's failure.
@MainActor @Suite struct StoredValueFlushTests {
    /// A store over `base` that counts its saves and fails them while `failing` is set.
    static func counting(
        _ base: ValueStore<Void, Int>, saves: Calls, failing: Shared<Bool> = Shared(false)
    ) -> ValueStore<Void, Int> {
        var store = base
        store.save = { value, environment in
            saves.increment()
            if failing.value { throw ValueStoreError(.io, store: "counting", reason: "disk full") }
            return try await base.save(value, environment)
        }
        return store
    }

    @Test func aThousandSetsInOneTurnCostAtMostThreeWrites() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "slider.json")
            let saves = Calls()
            let file = ValueStore<Void, Int>.jsonFile(url)
            let stored = await StoredValue.loaded(Self.counting(file, saves: saves), default: 0)
            #expect(!stored.isSaving)
            let startedSaving = Shared(false)
            withObservationTracking {
                _ = stored.isSaving
            } onChange: {
                startedSaving.value = true
            }
            for value in 1...1_000 {
                stored.value = value
            }
            try await stored.flush()
            #expect(startedSaving.value, "isSaving went true")
            #expect(try await file.load() == 1_000)
            #expect(saves.value <= 3, "1,000 sets made \(saves.value) writes")
            #expect(await eventually { !stored.isSaving })
            #expect(stored.value == 1_000)
        }
    }

    @Test func setsDuringAWriteShareTheNextOne() async throws {
        let saves = Calls()
        let base = ValueStore<Void, Int>.inMemory(0)
        let stall = Stall.firstSave(of: Self.counting(base, saves: saves))
        let stored = await StoredValue.loaded(stall.store, default: 0)
        stored.value = 1
        await stall.reached()  // 1 is written; the write has not returned
        for value in 2...500 {
            stored.value = value
        }
        stall.resume()
        try await stored.flush()
        #expect(saves.value == 2)
        #expect(try await base.load() == 500)
    }

    @Test func flushThrowsTheFailureOfTheWriteThatHeldTheLastValue() async throws {
        let saves = Calls()
        let failing = Shared(true)
        let base = ValueStore<Void, Int>.inMemory(0)
        let stored = await StoredValue.loaded(Self.counting(base, saves: saves, failing: failing), default: 0)
        stored.value = 1
        await #expect(throws: ValueStoreError.self) { try await stored.flush() }
        await #expect(throws: ValueStoreError.self) { try await stored.flush() }  // still not durable
        failing.value = false
        stored.value = 2
        try await stored.flush()
        #expect(try await base.load() == 2)
    }

    @Test func aFlushWhoseValueAFailedWriteReplacedThrows() async throws {
        let saves = Calls()
        let failing = Shared(false)
        let base = ValueStore<Void, Int>.inMemory(0)
        let stall = Stall.firstSave(of: Self.counting(base, saves: saves, failing: failing))
        let stored = await StoredValue.loaded(stall.store, default: 0)
        stored.value = 1
        await stall.reached()  // 1 is written; the write has not returned
        stored.value = 2
        let flushing = Task { try await stored.flush() }  // waits for the write that holds 2
        await Task.yield()  // the flush runs first on the main actor, and waits
        stored.value = 3  // replaces 2 before it is written
        failing.value = true  // and the write of 3 fails
        stall.resume()
        await #expect(throws: ValueStoreError.self) { try await flushing.value }
        #expect(try await base.load() == 1)
    }

    @Test func aFlushAfterASetRefusedOverUnreadableDataThrows() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        var unreadable = base
        unreadable.load = { _ in throw ValueStoreError(.corrupted, store: "test", reason: "damaged") }
        unreadable.loadImmediately = nil
        let stored = await StoredValue.loaded(unreadable, default: 0)
        stored.value = 5
        await #expect(throws: ValueStoreError.self) { try await stored.flush() }
        #expect(try await base.load() == 1)
    }

    // MARK: - A refused set during a write

    /// A store over `base` whose loads fail while `unreadable` is set.
    static func readable(_ base: ValueStore<Void, Int>, unless unreadable: Shared<Bool>) -> ValueStore<Void, Int> {
        var store = base
        store.load = { environment in
            if unreadable.value { throw ValueStoreError(.corrupted, store: "test", reason: "damaged") }
            return try await base.load(environment)
        }
        store.loadImmediately = nil
        return store
    }

    @Test func flushAfterARefusedSetDuringASlowSaveEnds() async throws {
        let base = ValueStore<Void, Int>.inMemory(0)
        let unreadable = Shared(false)
        let stall = Stall.firstSave(of: Self.readable(base, unless: unreadable))
        let stored = await StoredValue.loaded(stall.store, default: 0)
        stored.value = 1
        await stall.reached()  // 1 is written; the write has not returned
        unreadable.value = true
        await stored.reload()  // a failure to read arrives mid-write
        stored.value = 2  // refused
        stall.resume()
        let flushed = await unlessItHangs { @MainActor in try await stored.flush() }
        let outcome = try #require(flushed, "flush() ended")
        #expect(throws: ValueStoreError.self, "the last set was refused") { try outcome.get() }
        #expect(try await base.load() == 1, "the earlier value landed")
        unreadable.value = false
        await stored.reload()
        let updated = try #require(await unlessItHangs { @MainActor in try await stored.update { $0 += 10 } })
        #expect(throws: Never.self, "update(_:) ended and wrote") { try updated.get() }
        let set = try #require(await unlessItHangs { @MainActor in try await stored.set(20) })
        #expect(throws: Never.self, "set(_:) ended and wrote") { try set.get() }
        #expect(try await base.load() == 20)
    }

    @Test func aFlushCalledBeforeARefusalReturnsTheOutcomeOfTheWriteItWaitsFor() async throws {
        let base = ValueStore<Void, Int>.inMemory(0)
        let unreadable = Shared(false)
        let stall = Stall.firstSave(of: Self.readable(base, unless: unreadable))
        let stored = await StoredValue.loaded(stall.store, default: 0)
        stored.value = 1
        await stall.reached()  // 1 is written; the write has not returned
        let flushing = Task { try await stored.flush() }  // waits for the write that holds 1
        await Task.yield()  // the flush runs first on the main actor, and waits
        unreadable.value = true
        await stored.reload()
        stored.value = 2  // refused: not the set the flush waits for
        stall.resume()
        let flushed = try #require(await unlessItHangs { try await flushing.value }, "flush() ended")
        #expect(throws: Never.self, "the write of 1 succeeded") { try flushed.get() }
        #expect(try await base.load() == 1)
        let later = try #require(await unlessItHangs { @MainActor in try await stored.flush() }, "flush() ended")
        #expect(throws: ValueStoreError.self, "a flush after the refusal reports it") { try later.get() }
    }

    @Test func isSavingIsFalseOnceFlushReturns() async throws {
        try await TemporaryDirectory.with { directory in
            // A file: its reads suspend, as the read after the writes does here.
            let stall = Stall.firstSave(of: .jsonFile(directory.appending(path: "count.json")))
            let stored = await StoredValue.loaded(stall.store, default: 0)
            stored.value = 1
            await stall.reached()  // 1 is written; the write has not returned
            await stored.reload()  // a state arrives mid-write, so the store is read again after it
            stall.resume()
            try await stored.flush()
            #expect(!stored.isSaving, "nothing set since the flush returned")
            #expect(stored.value == 1)
        }
    }

    @Test func flushWithNothingSetReturnsAtOnce() async throws {
        let stored = await StoredValue.loaded(ValueStore<Void, Int>.inMemory(3), default: 0)
        try await stored.flush()
        try await stored.set(4)
        try await stored.flush()
        #expect(!stored.isSaving)
    }

    @Test func isSavingIsObserved() async throws {
        let stored = await StoredValue.loaded(ValueStore<Void, Int>.inMemory(0), default: 0)
        let changed = Shared(false)
        withObservationTracking {
            _ = stored.isSaving
        } onChange: {
            changed.value = true
        }
        stored.value = 1
        #expect(changed.value)
        try await stored.flush()
    }
}
