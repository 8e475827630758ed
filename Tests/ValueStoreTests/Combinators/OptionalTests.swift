import Testing
import ValueStore
import ValueStoreTesting

@Suite struct OptionalTests {
    @Test func absenceLoadsAsNil() async throws {
        let store = ValueStore<Void, Int>.inMemory().optional()
        #expect(try await store.load() == nil)
    }

    @Test func savingNilRemoves() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.optional()
        #expect(try await store.save(nil) == nil)
        await #expect(throws: ValueStoreError.notFound) { try await base.load() }
        #expect(try await store.save(2) == 2)
        #expect(try await base.load() == 2)
        try await store.remove()
        #expect(try await store.load() == nil)
    }

    @Test func otherErrorsStillThrow() async throws {
        let store = ValueStore<Void, Int>.failing(ValueStoreError(.corrupted)).optional()
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }
    }

    @Test func updateCanRemoveAtomically() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        let store = base.optional()
        try await concurrently(500) { _ in try await store.update { $0 = ($0 ?? 0) + 1 } }
        #expect(try await base.load() == 500)
        let result = try await store.update { $0 = nil }
        #expect(result == nil)
        await #expect(throws: ValueStoreError.notFound) { try await base.load() }
    }
}
