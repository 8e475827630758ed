import Testing
import ValueStore
import ValueStoreTesting

@Suite struct DefaultTests {
    @Test func loadsTheDefaultWhereNothingIsStored() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        let store = base.default(10)
        #expect(try await store.load() == 10)
        await #expect(throws: ValueStoreError.notFound) { try await base.load() }
    }

    @Test func savesAndRemovesGoToTheBase() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        let store = base.default(10)
        try await store.save(3)
        #expect(try await base.load() == 3)
        try await store.remove()
        await #expect(throws: ValueStoreError.notFound) { try await base.load() }
        #expect(try await store.load() == 10)
    }

    @Test func neverHidesOtherErrors() async throws {
        let corrupt = ValueStore<Void, Int>.failing(ValueStoreError(.corrupted)).default(0)
        await #expect(throws: ValueStoreError(.corrupted)) { try await corrupt.load() }
        let failing = ValueStore<Void, Int>.failing(Boom()).default(0)
        await #expect(throws: Boom()) { try await failing.load() }
    }

    @Test func loadDefaultRecoversFromAbsenceOnly() async throws {
        #expect(try await ValueStore<Void, Int>.inMemory().load(default: 4) == 4)
        #expect(try await ValueStore<Void, Int>.inMemory(1).load(default: 4) == 1)
        await #expect(throws: ValueStoreError(.io)) {
            try await ValueStore<Void, Int>.failing(ValueStoreError(.io)).load(default: 4)
        }
        #expect(try await ValueStore<String, Int>.inMemory().load(default: 5, environment: "a") == 5)
    }

    @Test func updateStartsFromTheDefaultAtomically() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        let store = base.default(100)
        try await concurrently(500) { _ in try await store.update { $0 += 1 } }
        #expect(try await base.load() == 600)
    }
}
