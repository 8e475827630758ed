import Testing
import ValueStore

@Suite struct FailingTests {
    @Test func everyOperationThrowsTheError() async throws {
        let store = ValueStore<Void, Int>.failing(Boom(id: 1))
        await #expect(throws: Boom(id: 1)) { try await store.load() }
        await #expect(throws: Boom(id: 1)) { try await store.save(1) }
        await #expect(throws: Boom(id: 1)) { try await store.remove() }
    }

    @Test func unimplementedNamesTheStoreAndTheOperation() async throws {
        let store = ValueStore<Void, Int>.unimplemented("Persistence.token")
        let load = await #expect(throws: ValueStoreError.self) { try await store.load() }
        #expect(load?.code == .unimplemented)
        let description = try #require(load?.description)
        #expect(description.contains("Persistence.token"))
        #expect(description.contains("'load' was called"))
        #expect(description.contains("FailingTests.swift"))

        let save = await #expect(throws: ValueStoreError.self) { try await store.save(1) }
        #expect(save?.description.contains("'save' was called") == true)
        let remove = await #expect(throws: ValueStoreError.self) { try await store.remove() }
        #expect(remove?.description.contains("'remove' was called") == true)
    }

    @Test func unimplementedIsNotAbsence() async throws {
        let store = ValueStore<Void, Int>.unimplemented().default(0)
        await #expect(throws: ValueStoreError(.unimplemented)) { try await store.load() }
    }
}
