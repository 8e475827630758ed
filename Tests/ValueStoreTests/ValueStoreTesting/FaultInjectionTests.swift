import Testing
import ValueStore
import ValueStoreTesting

@Suite struct FaultInjectionTests {
    @Test func failsTheNthCall() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).injecting(.failingCall(2))
        #expect(try await store.load() == 1)
        let error = await #expect(throws: ValueStoreError.self) { try await store.save(5) }
        #expect(error?.code == .io)
        #expect(error?.reason == "injected fault on call 2 (save)")
        #expect(try await store.load() == 1, "the failed save never reached the store")
    }

    @Test func failsEverySaveWithTheGivenError() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.injecting(.failingSaves(with: Boom()))
        await #expect(throws: Boom()) { try await store.save(2) }
        await #expect(throws: Boom()) { try await store.save(3) }
        #expect(try await store.load() == 1)
    }

    @Test func failsAfterWriting() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.injecting(.failingSaves(afterWriting: true))
        await #expect(throws: ValueStoreError(.io)) { try await store.save(2) }
        #expect(try await base.load() == 2)
    }

    @Test func failsOneOperation() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).injecting(.failing(.remove, with: Boom()))
        #expect(try await store.load() == 1)
        await #expect(throws: Boom()) { try await store.remove() }
        #expect(try await store.load() == 1)
    }

    @Test func delaysCalls() async throws {
        let clock = ContinuousClock()
        let store = ValueStore<Void, Int>.inMemory(1).injecting(.delaying(.milliseconds(20)))
        let elapsed = try await clock.measure { _ = try await store.load() }
        #expect(elapsed >= .milliseconds(20))
    }

    @Test func combinesFaults() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).injecting(
            .failingCall(1, with: Boom(id: 1)), .failingSaves(with: Boom(id: 2)))
        await #expect(throws: Boom(id: 1)) { try await store.load() }
        #expect(try await store.load() == 1)
        await #expect(throws: Boom(id: 2)) { try await store.save(2) }
    }

    @Test func updateThroughAnInjectingStoreStaysAtomic() async throws {
        let store = ValueStore<Void, Int>.inMemory(0).injecting(.delaying(.milliseconds(1)))
        try await concurrently(50) { _ in try await store.update { $0 += 1 } }
        #expect(try await store.load() == 50)
    }
}
