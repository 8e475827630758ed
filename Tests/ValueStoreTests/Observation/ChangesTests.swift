import Foundation
import Synchronization
import Testing
import ValueStore

/// `changes()`: the state now, then one after each change; failures are elements; combinators
/// pass the signals through.
@Suite struct ChangesTests {
    @Test func theFirstElementIsTheStateNow() async throws {
        var stored = ValueStore<Void, Int>.inMemory(1).changes().makeAsyncIterator()
        #expect(await stored.next()?.summary == "1")
        var empty = ValueStore<Void, Int>.inMemory().changes().makeAsyncIterator()
        #expect(await empty.next()?.summary == "absent")
    }

    @Test func inMemoryReportsEachSaveRemoveAndUpdate() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        try await store.save(2)
        #expect(await states.next()?.summary == "2")
        try await store.remove()
        #expect(await states.next()?.summary == "absent")
        try await store.default(10).update { $0 += 1 }
        #expect(await states.next()?.summary == "11")
    }

    @Test func aSlowConsumerEndsWithTheNewestState() async throws {
        let store = ValueStore<Void, Int>.inMemory(0)
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "0")
        for value in 1...50 {
            try await store.save(value)
        }
        #expect(await states.next()?.summary == "50")
    }

    @Test func aFailureIsAnElementNotTheEnd() async throws {
        let broken = Shared(false)
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = ValueStore<Void, Int>(
            load: { _ in
                if broken.value { throw ValueStoreError(.corrupted, reason: "test") }
                return try await base.load()
            },
            save: { value, _ in try await base.save(value) },
            remove: { _ in try await base.remove() }
        )
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        broken.value = true
        try await store.save(2)
        #expect(await states.next()?.summary == "failed(corrupted)")
        broken.value = false
        try await store.save(3)
        #expect(await states.next()?.summary == "3")
    }

    @Test func aStoreBuiltByHandReportsWritesThroughItAndItsCopies() async throws {
        let box = ValueStore<Void, String>.inMemory("a")
        let store = ValueStore<Void, String>(
            load: { try await box.load() },
            save: { try await box.save($0) },
            remove: { try await box.remove() }
        )
        let copy = store
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "a")
        try await copy.save("b")
        #expect(await states.next()?.summary == "b")
        try await copy.update { $0 += "c" }
        #expect(await states.next()?.summary == "bc")
        try await copy.remove()
        #expect(await states.next()?.summary == "absent")
    }

    @Test func aStoreBuiltByHandCanSupplyItsOwnSignals() async throws {
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let backend = Shared(1)
        let store = ValueStore<Void, Int>(
            label: "backend",
            load: { _ in backend.value },
            save: { value, _ in
                backend.value = value
                return value
            },
            remove: { _ in },
            changeSignals: { _ in signals }
        )
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        backend.value = 2  // a change the backend reports on its own
        signal.yield()
        #expect(await states.next()?.summary == "2")
    }

    @Test func endingTheLoopReleasesTheSubscription() async throws {
        let (signals, _) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let released = Shared(false)
        let store = ValueStore<Void, Int>(
            load: { _ in 1 },
            save: { value, _ in value },
            remove: { _ in },
            changeSignals: { _ in
                AsyncStream { continuation in
                    continuation.onTermination = { _ in released.value = true }
                }
            }
        )
        _ = signals
        for await state in store.changes() {
            #expect(state.summary == "1")
            break
        }
        #expect(released.value)
    }

    @Test func cancellingTheTaskEndsIteration() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        let log = StateLog(store.changes())
        #expect(await log.waitForLast("1"))
        log.cancel()
        #expect(await log.waitForLast("end"))
    }

    @Test func combinatorsPassChangesThrough() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        var defaulted = base.default(0).changes().makeAsyncIterator()
        var optional = base.optional().changes().makeAsyncIterator()
        var mapped = base.map(load: { "#\($0)" }, save: { Int($0.dropFirst())! }).changes().makeAsyncIterator()
        let coded = ValueStore<Void, Data>.inMemory().coded(Codec<Int, Data>.json)
        var codedStates = coded.changes().makeAsyncIterator()
        var mappedError = base.mapError { _ in ValueStoreError(.io) }.changes().makeAsyncIterator()
        var provided = base.require(String.self).provide("x").changes().makeAsyncIterator()
        var pulledBack = base.pullback { (_: Int) in () }.changes(environment: 3).makeAsyncIterator()
        #expect(await defaulted.next()?.summary == "0")
        #expect(await optional.next()?.summary == "nil")
        #expect(await mapped.next()?.summary == "absent")
        #expect(await codedStates.next()?.summary == "absent")
        #expect(await mappedError.next()?.summary == "failed(io)")
        #expect(await provided.next()?.summary == "absent")
        #expect(await pulledBack.next()?.summary == "absent")
        try await base.save(5)
        #expect(await defaulted.next()?.summary == "5")
        #expect(await optional.next()?.summary == "Optional(5)")
        #expect(await mapped.next()?.summary == "#5")
        #expect(await mappedError.next()?.summary == "5")
        #expect(await provided.next()?.summary == "5")
        #expect(await pulledBack.next()?.summary == "5")
        try await coded.save(7)
        #expect(await codedStates.next()?.summary == "7")
    }

    @Test func theAsynchronousMapAndVersionedPassChangesThrough() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        var mapped = base.map(load: { stored async in "#\(stored)" }, save: { value async in Int(value.dropFirst())! })
            .changes().makeAsyncIterator()
        let bytes = ValueStore<Void, Data>.inMemory()
        var versioned = bytes.versioned(Note.self).changes().makeAsyncIterator()
        #expect(await mapped.next()?.summary == "absent")
        #expect(await versioned.next()?.summary == "absent")
        try await base.save(5)
        #expect(await mapped.next()?.summary == "#5")
        try await bytes.save(Data(#"{"version":1,"value":{"text":"hi"}}"#.utf8))
        #expect(await versioned.next()?.summary == "Note(text: \"hi\")")
    }

    struct Note: VersionedValue {
        static let version = 1
        var text: String
    }

    @Test func replacingObservesTheNewStore() async throws {
        let old = ValueStore<Void, Int>.inMemory(1)
        let new = ValueStore<Void, Int>.inMemory()
        var states = new.replacing(old).changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")  // migrated by the first load
        #expect(try await old.optional().load() == nil)
        try await new.save(2)
        #expect(await states.next()?.summary == "2")
    }

    @Test func cachesPassChangesThroughAndNeverYieldAStaleValue() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let cached = base.cached()
        let cachedBy = base.cached(by: .inMemory())
        var states = cached.changes().makeAsyncIterator()
        var byStates = cachedBy.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        #expect(await byStates.next()?.summary == "1")
        try await base.save(2)  // behind both caches' backs
        #expect(await states.next()?.summary == "2")
        #expect(await byStates.next()?.summary == "2")
        try await cached.save(3)
        #expect(await states.next()?.summary == "3")
    }

    @Test func cachedDropsItsValueWhenTheBaseChangesBehindItsBack() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let cached = base.cached()
        #expect(try await cached.load() == 1)
        try await base.save(2)
        #expect(try await eventually { try await cached.load() == 2 })
    }
}
