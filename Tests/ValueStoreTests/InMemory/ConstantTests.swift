import Testing
import ValueStore

@Suite struct ConstantTests {
    @Test func alwaysLoadsItsValue() async throws {
        let store = ValueStore<Void, Int>.constant(7)
        #expect(try await store.load() == 7)
        #expect(try await store.save(8) == 7, "save returns what stays stored")
        #expect(try await store.load() == 7)
        try await store.remove()
        #expect(try await store.load() == 7)
    }
}
