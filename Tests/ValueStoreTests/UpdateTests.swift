import Testing
import ValueStore

@Suite struct UpdateTests {
    @Test func returnsTheStoredValue() async throws {
        let store = ValueStore<Void, [String]>.inMemory(["a"])
        let updated = try await store.update { $0.append("b") }
        #expect(updated == ["a", "b"])
        #expect(try await store.load() == ["a", "b"])
    }

    @Test func absentValueThrowsNotFound() async throws {
        let store = ValueStore<Void, Int>.inMemory()
        await #expect(throws: ValueStoreError.notFound) { try await store.update { $0 += 1 } }
    }

    @Test func aThrowingTransformSavesNothing() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        await #expect(throws: Boom()) {
            try await store.update { value in
                value = 99
                throw Boom()
            }
        }
        #expect(try await store.load() == 1)
    }

    @Test func transformMayCaptureLocalState() async throws {
        let store = ValueStore<Void, Int>.inMemory(5)
        var previous = 0
        try await store.update { value in
            previous = value
            value *= 2
        }
        #expect(previous == 5)
        #expect(try await store.load() == 10)
    }

    @MainActor @Test func worksFromTheMainActor() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        var seen: [Int] = []
        try await store.update { value in
            seen.append(value)
            value += 1
        }
        #expect(seen == [1])
    }

    @Test func customStoresUpdateByLoadAndSave() async throws {
        let box = ValueStore<Void, Int>.inMemory(1)
        let custom = ValueStore<Void, Int>(load: { try await box.load() }, save: { try await box.save($0) }, remove: {})
        #expect(try await custom.update { $0 += 1 } == 2)
        #expect(try await box.load() == 2)
    }

    @Test func setSavesOrRemoves() async throws {
        let store = ValueStore<Void, Int>.inMemory()
        #expect(try await store.set(3) == 3)
        #expect(try await store.load() == 3)
        #expect(try await store.set(nil) == nil)
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        let keyed = ValueStore<String, Int>.inMemory()
        try await keyed.set(4, environment: "a")
        #expect(try await keyed.load("a") == 4)
    }
}
