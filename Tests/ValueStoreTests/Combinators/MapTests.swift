import Testing
import ValueStore
import ValueStoreTesting

@Suite struct MapTests {
    @Test func convertsBothWays() async throws {
        let celsius = ValueStore<Void, Double>.inMemory(100)
        let fahrenheit = celsius.map(
            load: { $0 * 9 / 5 + 32 },
            save: { ($0 - 32) * 5 / 9 }
        )
        #expect(try await fahrenheit.load() == 212)
        try await fahrenheit.save(32)
        #expect(try await celsius.load() == 0)
        try await ValueStoreLaws.check(fahrenheit, samples: 50, 68)
    }

    @Test func loadErrorsPropagateUnchanged() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).map(
            load: { (_: Int) -> String in throw Boom(id: 1) },
            save: { Int($0)! }
        )
        await #expect(throws: Boom(id: 1)) { try await store.load() }
    }

    @Test func saveErrorsSaveNothing() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.map(load: { String($0) }, save: { (_: String) -> Int in throw Boom(id: 2) })
        await #expect(throws: Boom(id: 2)) { try await store.save("5") }
        #expect(try await base.load() == 1)
    }

    @Test func saveConvertsBackWhenTheBaseChangesTheValue() async throws {
        let clamping = ValueStore<Void, Int>(
            load: { 10 },
            save: { min($0, 10) },
            remove: {}
        )
        let store = clamping.map(load: { String($0) }, save: { Int($0)! })
        #expect(try await store.save("99") == "10")
    }

    @Test func absencePassesThrough() async throws {
        let store = ValueStore<Void, Int>.inMemory().map(load: { String($0) }, save: { Int($0)! })
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }

    @Test func mapErrorReplacesEveryError() async throws {
        let store = ValueStore<Void, Int>.failing(Boom(id: 1)).mapError { _ in Boom(id: 9) }
        await #expect(throws: Boom(id: 9)) { try await store.load() }
        await #expect(throws: Boom(id: 9)) { try await store.save(1) }
        await #expect(throws: Boom(id: 9)) { try await store.remove() }
    }

    @Test func mapErrorSeesAbsence() async throws {
        let hidden = ValueStore<Void, Int>.inMemory().mapError { _ in Boom() }.default(0)
        await #expect(throws: Boom()) { try await hidden.load() }
        let kept = ValueStore<Void, Int>.inMemory().mapError { $0 }.default(0)
        #expect(try await kept.load() == 0)
    }

    @Test func mapErrorLeavesSuccessAlone() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).mapError { _ in Boom() }
        #expect(try await store.load() == 1)
        #expect(try await store.save(2) == 2)
        try await store.remove()
        try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory().mapError { $0 }, samples: 2, 3)
    }

    @Test func mapErrorDoesNotTouchTheUpdateTransformsError() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).mapError { _ in Boom(id: 9) }
        await #expect(throws: Boom(id: 1)) {
            try await store.update { _ in throw Boom(id: 1) }
        }
        #expect(try await store.load() == 1)
    }

    @Test func updateStaysAtomicThroughMapAndMapError() async throws {
        let base = ValueStore<Void, Int>.inMemory(0)
        let store = base.map(load: { String($0) }, save: { Int($0)! }).mapError { $0 }
        try await concurrently(500) { _ in
            try await store.update { $0 = String(Int($0)! + 1) }
        }
        #expect(try await base.load() == 500)
    }

    @Test func mapErrorMapsTheAbsenceThatUpdateFinds() async throws {
        struct Missing: Error {}
        let store = ValueStore<Void, Int>.inMemory().mapError { error in
            error as? ValueStoreError == .notFound ? Missing() : error
        }
        await #expect(throws: Missing.self) { try await store.update { $0 += 1 } }
        await #expect(throws: Missing.self) { try await store.load() }
        // The transform's own errors still pass through unchanged.
        try await store.save(1)
        await #expect(throws: ValueStoreError.notFound) {
            try await store.update { _ in throw ValueStoreError.notFound }
        }
    }
}
