import Testing
import ValueStore
import ValueStoreTesting

@Suite struct InMemoryTests {
    @Test func obeysTheLaws() async throws {
        try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory(), samples: 1, 2)
        try await ValueStoreLaws.check(ValueStore<Void, Settings>.inMemory(.standard), samples: .standard, .custom)
    }

    @Test func startsWithTheInitialValue() async throws {
        #expect(try await ValueStore<Void, Int>.inMemory(5).load() == 5)
        await #expect(throws: ValueStoreError.notFound) {
            try await ValueStore<Void, Int>.inMemory().load()
        }
    }

    @Test func eachCallMakesAnIndependentBox() async throws {
        let first = ValueStore<Void, Int>.inMemory(1)
        let second = ValueStore<Void, Int>.inMemory(1)
        try await first.save(2)
        #expect(try await second.load() == 1)
    }

    @Test func copiesOfOneStoreShareTheBox() async throws {
        let first = ValueStore<Void, Int>.inMemory(1)
        let copy = first
        try await first.save(2)
        #expect(try await copy.load() == 2)
    }

    @Test func ignoresTheEnvironment() async throws {
        let store = ValueStore<String, Int>.inMemory()
        _ = try await store.save(3, "a")
        #expect(try await store.load("b") == 3)
    }

    @Test func notFoundNamesTheStore() async throws {
        let error = await #expect(throws: ValueStoreError.self) {
            try await ValueStore<Void, Int>.inMemory().load()
        }
        #expect(error?.store == "in-memory store")
    }

    // `save(_:)` stores without calling the `save` closure, to spare an async frame; it must
    // still be a save: stored, returned, and reported to `changes()`.
    @Test(.timeLimit(.minutes(1))) func saveStoresReturnsAndReportsTheValue() async throws {
        let store = ValueStore<Void, Int>.inMemory(1)
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        #expect(try await store.save(2) == 2)
        #expect(try await store.load() == 2)
        #expect(await states.next()?.summary == "2")
    }

    @Test func aReplacedSaveIsNeverBypassed() async throws {
        let base = ValueStore<Void, Int>.inMemory(0)
        var store = base
        store.save = { value, environment in try await base.save(value * 10, environment) }
        #expect(try await store.save(2) == 20)
        #expect(try await base.load() == 20)

        var throughKeyPath = base
        throughKeyPath[keyPath: \.save] = { _, _ in throw ValueStoreError(.locked, reason: "replaced") }
        await #expect(throws: ValueStoreError.self) { try await throughKeyPath.save(3) }
        #expect(try await base.load() == 20)
    }

    @Test func concurrentUpdatesAreAtomic() async throws {
        let store = ValueStore<Void, Int>.inMemory(0)
        try await concurrently(500) { _ in try await store.update { $0 += 1 } }
        #expect(try await store.load() == 500)
    }

    @Test func concurrentSavesAndLoadsSeeWholeValues() async throws {
        let store = ValueStore<Void, [Int]>.inMemory([])
        try await concurrently(400) { index in
            if index.isMultiple(of: 2) {
                try await store.save(Array(repeating: index, count: 64))
            } else {
                let value = try await store.load()
                #expect(Set(value).count <= 1, "a load saw a mix of two saves: \(value)")
            }
        }
    }
}
