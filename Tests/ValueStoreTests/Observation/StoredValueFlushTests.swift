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
