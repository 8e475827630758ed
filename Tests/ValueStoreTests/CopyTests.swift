import Testing
import ValueStore

@Suite struct CopyTests {
    @Test func copyKeepsTheSource() async throws {
        let source = ValueStore<Void, Int>.inMemory(1)
        let target = ValueStore<Void, Int>.inMemory()
        #expect(try await source.copy(to: target) == 1)
        #expect(try await source.load() == 1)
        #expect(try await target.load() == 1)
    }

    @Test func moveRemovesTheSource() async throws {
        let source = ValueStore<Void, Int>.inMemory(1)
        let target = ValueStore<Void, Int>.inMemory(0)
        #expect(try await source.move(to: target) == 1)
        await #expect(throws: ValueStoreError.notFound) { try await source.load() }
        #expect(try await target.load() == 1)
    }

    @Test func moveNeverRemovesAValueSavedWhileItRuns() async throws {
        let source = ValueStore<Void, Int>.inMemory(7)
        let target = Stall.firstSave(of: .inMemory())
        let move = Task { try await source.move(to: target.store) }
        await target.reached()
        try await source.save(99)  // while the move is between its save and its remove
        target.resume()
        _ = try await move.value
        let left = try await source.optional().load()
        let moved = try await target.store.load()
        #expect(left == 99 || moved == 99, "the value saved during the move survives, here or there")
    }

    @Test func moveKeepsTheSourceWhenTheTargetFails() async throws {
        let source = ValueStore<Void, Int>.inMemory(1)
        await #expect(throws: Boom()) { try await source.move(to: .failing(Boom())) }
        #expect(try await source.load() == 1)
    }

    @Test func anEmptySourceLeavesTheTargetAlone() async throws {
        let target = ValueStore<Void, Int>.inMemory(5)
        await #expect(throws: ValueStoreError.notFound) { try await ValueStore<Void, Int>.inMemory().copy(to: target) }
        await #expect(throws: ValueStoreError.notFound) { try await ValueStore<Void, Int>.inMemory().move(to: target) }
        #expect(try await target.load() == 5)
    }

    @Test func passesTheEnvironmentToBothStores() async throws {
        let source = ValueStore<String, Int>.inMemory(2)
        let target = ValueStore<String, Int>.inMemory()
        try await source.move(to: target, environment: "x")
        #expect(try await target.load("x") == 2)
    }
}
