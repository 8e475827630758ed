import Testing
@testable import ValueStore

@Suite struct ValueStoreTests {
    @Test func closuresReceiveTheEnvironment() async throws {
        let seen = Locked<[String]>([])
        let store = ValueStore<String, Int>(
            load: { environment in
                seen.withLock { $0.append("load \(environment)") }
                return 1
            },
            save: { value, environment in
                seen.withLock { $0.append("save \(value) \(environment)") }
                return value
            },
            remove: { environment in
                seen.withLock { $0.append("remove \(environment)") }
            }
        )
        #expect(try await store.load("a") == 1)
        #expect(try await store.save(2, "b") == 2)
        try await store.remove("c")
        #expect(seen.withLock { $0 } == ["load a", "save 2 b", "remove c"])
    }

    @Test func voidEnvironmentNeedsNoArguments() async throws {
        let box = Locked<Int?>(nil)
        let store = ValueStore<Void, Int>(
            load: {
                guard let value = box.withLock({ $0 }) else { throw ValueStoreError.notFound }
                return value
            },
            save: { value in
                box.withLock { $0 = value }
                return value
            },
            remove: { box.withLock { $0 = nil } }
        )
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        try await store.save(7)
        #expect(try await store.load() == 7)
        try await store.remove()
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }

    @Test func replacingAClosureDropsTheAtomicUpdate() async throws {
        var store = ValueStore<Void, Int>.inMemory(0)
        #expect(store.transaction != nil)
        let saves = Calls()
        let save = store.save
        store.save = { value, environment in
            saves.increment()
            return try await save(value, environment)
        }
        #expect(store.transaction == nil)
        #expect(!store.returnsSavedValue)
        try await store.update { $0 += 1 }
        #expect(saves.value == 1, "update must go through the closure the user installed")
        #expect(try await store.load() == 1)
    }

    @Test func replacedClosuresWinOverTheSynchronousFastPath() async throws {
        var store = ValueStore<Void, Int>.inMemory(1)
        #expect(store.immediate.load != nil)
        store.load = { _ in 5 }
        #expect(try await store.load() == 5)
        store.save = { value, _ in value * 10 }
        #expect(try await store.save(2) == 20)
        let removes = Calls()
        store.remove = { _ in removes.increment() }
        try await store.remove()
        #expect(removes.value == 1)
        #expect(store.immediate.load == nil && store.immediate.save == nil && store.immediate.remove == nil)
    }

    @Test func combinatorsKeepTheFastPathOnlyWhereTheBaseHasIt() async throws {
        let memory = ValueStore<Void, Int>.inMemory(1)
        #expect(memory.map(load: { $0 }, save: { $0 }).default(0).optional().immediate.load != nil)
        #expect(memory.replacing(.inMemory()).immediate.load == nil)
        let custom = ValueStore<Void, Int>(load: { 1 }, save: { $0 }, remove: {})
        #expect(custom.map(load: { $0 }, save: { $0 }).immediate.load == nil)
    }
}
