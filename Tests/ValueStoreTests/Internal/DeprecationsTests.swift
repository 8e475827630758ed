import Testing
import ValueStore

@Suite struct DeprecatedTests {
    @available(*, deprecated)
    @Test func oldNamesStillWork() async throws {
        #expect(try await ValueStore<Void, Int>.const(3).load() == 3)
        await #expect(throws: Boom()) { try await ValueStore<Void, Int>.error(Boom()).load() }
        await #expect(throws: ValueStoreError.noData) { try await ValueStore<Void, Int>.inMemory().load() }
    }
}
