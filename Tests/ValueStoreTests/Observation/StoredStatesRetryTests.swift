import Synchronization
import Testing
import ValueStore

/// A stream whose load failed loads again on its own, with backoff, until a load succeeds; a
/// retry that finds the same failure yields nothing.
@Suite struct StoredStatesRetryTests {
    /// A store built by hand over `base` (so writes to `base` do not signal it) whose load runs
    /// `failure` first: a non-nil error is thrown.
    static func store(
        over base: ValueStore<Void, Int>,
        loads: Calls,
        failure: @escaping @Sendable (_ load: Int) -> ValueStoreError?
    ) -> ValueStore<Void, Int> {
        ValueStore<Void, Int>(
            load: { _ in
                loads.increment()
                if let error = failure(loads.value) { throw error }
                return try await base.load()
            },
            save: { value, _ in try await base.save(value) },
            remove: { _ in try await base.remove() }
        )
    }

    @Test func aFailedLoadIsTriedAgainUntilItSucceedsWithNoSignal() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let broken = Shared(false)
        let loads = Calls()
        let store = Self.store(over: base, loads: loads) { _ in
            broken.value ? ValueStoreError(.unavailable, reason: "server away") : nil
        }
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        broken.value = true
        try await store.save(2)
        #expect(await states.next()?.summary == "failed(unavailable)")
        // Repaired behind the store's back: nothing signals its streams.
        try await base.save(3)
        broken.value = false
        #expect(await states.next()?.summary == "3")
    }

    @Test func retriesThatFindTheSameFailureYieldNothing() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let loads = Calls()
        // The first load succeeds; the second (after the save) and the two retries after it
        // fail alike; the fifth succeeds.
        let store = Self.store(over: base, loads: loads) { load in
            (2...4).contains(load) ? ValueStoreError(.unavailable, reason: "try \(load)") : nil
        }
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        try await store.save(2)
        #expect(await states.next()?.summary == "failed(unavailable)")
        #expect(await states.next()?.summary == "2")
        #expect(loads.value == 5, "two retries found the same failure, and yielded nothing")
    }

    @Test func aRetryThatFindsAnotherFailureYieldsIt() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let loads = Calls()
        let store = Self.store(over: base, loads: loads) { load in
            switch load {
            case 2: ValueStoreError(.unavailable, reason: "server away")
            case 3: ValueStoreError(.corrupted, reason: "bad bytes")
            default: nil
            }
        }
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        try await store.save(2)
        #expect(await states.next()?.summary == "failed(unavailable)")
        #expect(await states.next()?.summary == "failed(corrupted)")
        #expect(await states.next()?.summary == "2")
    }

    @Test func aSignalAfterAFailureStillYieldsWhatTheLoadFinds() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let broken = Shared(true)
        let loads = Calls()
        let store = Self.store(over: base, loads: loads) { _ in
            broken.value ? ValueStoreError(.corrupted, reason: "bad bytes") : nil
        }
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "failed(corrupted)")
        // A signal reports the state it finds, a repeated failure included, as before retries.
        try await store.save(2)
        #expect(await states.next()?.summary == "failed(corrupted)")
        broken.value = false
        try await store.save(3)
        #expect(await states.next()?.summary == "3")
    }

    @Test func anOutageIsReportedOnceWhateverSignalsDuringIt() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let loads = Calls()
        // The first two loads find the server away: the first, and the one a save's signal asks for.
        let store = Self.store(over: base, loads: loads) { load in
            load <= 2 ? ValueStoreError(.unavailable, reason: "server away") : nil
        }
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "failed(unavailable)")
        try await store.save(2)
        // The signal's load finds the same failure and yields nothing; the next load the value.
        #expect(await states.next()?.summary == "2")
        #expect(loads.value == 3)
    }

    @Test func cancellingTheConsumerEndsAStreamThatIsRetrying() async throws {
        let store = Self.store(over: .inMemory(1), loads: Calls()) { _ in
            ValueStoreError(.unavailable, reason: "server away")
        }
        let consumer = Task {
            var count = 0
            for await _ in store.changes() {
                count += 1
            }
            return count
        }
        consumer.cancel()
        #expect(await consumer.value <= 1)
    }
}
