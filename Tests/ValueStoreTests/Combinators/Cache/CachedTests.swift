import Testing
import ValueStore
import ValueStoreTesting

@Suite struct CachedTests {
    /// A base store that counts its loads.
    static func counted(_ initial: Int?, loads: Calls) -> ValueStore<Void, Int> {
        let box = ValueStore<Void, Int>.inMemory(initial)
        var store = box
        store.load = { environment in
            loads.increment()
            return try await box.load(environment)
        }
        store.loadImmediately = nil  // the replaced load must not be bypassed
        return store
    }

    @Test func obeysTheLaws() async throws {
        try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory().cached(), samples: 1, 2)
        try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory().cached(by: .inMemory()), samples: 1, 2)
    }

    @Test func aHitPerformsNoBaseLoad() async throws {
        let loads = Calls()
        let store = Self.counted(1, loads: loads).cached()
        #expect(try await store.load() == 1)
        #expect(try await store.load() == 1)
        #expect(try await store.load() == 1)
        #expect(loads.value == 1)
    }

    @Test func aSaveFillsTheCache() async throws {
        let loads = Calls()
        let store = Self.counted(nil, loads: loads).cached()
        try await store.save(4)
        #expect(try await store.load() == 4)
        #expect(loads.value == 0)
    }

    @Test func concurrentColdLoadsShareOneBaseLoad() async throws {
        let loads = Calls()
        // The first base load pauses, so the other callers arrive while it is in flight.
        let stall = Stall.firstLoad(of: Self.counted(3, loads: loads))
        let store = stall.store.cached()
        let callers = Task {
            try await concurrently(200) { _ in
                let value = try await store.load()
                #expect(value == 3)
            }
        }
        await stall.reached()
        stall.resume()
        try await callers.value
        #expect(loads.value == 1)
    }

    @Test func removeEmptiesTheCache() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).cached()
        #expect(try await store.load() == 1)
        try await store.remove()
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }

    @Test func aFailedSaveLeavesCacheAndBaseAgreeing() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let refused = base.injecting(.failingSaves()).cached()
        #expect(try await refused.load() == 1)
        await #expect(throws: ValueStoreError(.io)) { try await refused.save(2) }
        #expect(try await refused.load() == 1)

        let lost = base.injecting(.failingSaves(afterWriting: true)).cached()
        #expect(try await lost.load() == 1)
        await #expect(throws: ValueStoreError(.io)) { try await lost.save(2) }
        #expect(try await lost.load() == 2, "the base holds 2, so the cache must not serve 1")
    }

    @Test func errorsAreNotCached() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).injecting(.failingCall(1)).cached()
        await #expect(throws: ValueStoreError(.io)) { try await store.load() }
        #expect(try await store.load() == 1)
    }

    @Test func absenceIsNotCached() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        let store = base.cached()
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        try await base.save(5)
        #expect(try await store.load() == 5)
    }

    @Test func cacheAndBaseAgreeAfterConcurrentSavesAndLoads() async throws {
        for _ in 0..<20 {
            let base = ValueStore<Void, Int>.inMemory(0).injecting(.delaying(.microseconds(50)))
            let store = base.cached()
            try await concurrently(100) { index in
                if index.isMultiple(of: 3) {
                    _ = try await store.load()
                } else {
                    try await store.save(index)
                }
            }
            #expect(try await store.load() == base.load())
        }
    }

    @Test func updateStaysAtomic() async throws {
        let base = ValueStore<Void, Int>.inMemory(0)
        let store = base.cached()
        try await concurrently(500) { index in
            if index.isMultiple(of: 5) {
                _ = try await store.load()
            } else {
                try await store.update { $0 += 1 }
            }
        }
        #expect(try await base.load() == 400)
        #expect(try await store.load() == 400)
    }

    @Test func cachedByReadsTheCacheFirst() async throws {
        let loads = Calls()
        let store = Self.counted(1, loads: loads).cached(by: .inMemory(7))
        #expect(try await store.load() == 7)
        #expect(loads.value == 0)
    }

    @Test func cachedByFillsTheCacheOnAMiss() async throws {
        let cache = ValueStore<Void, Int>.inMemory()
        let store = ValueStore<Void, Int>.inMemory(1).cached(by: cache)
        #expect(try await store.load() == 1)
        #expect(try await cache.load() == 1)
        try await store.save(2)
        #expect(try await cache.load() == 2)
        try await store.remove()
        await #expect(throws: ValueStoreError.notFound) { try await cache.load() }
    }

    @Test func aFailingCacheNeverFailsTheBase() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.cached(by: .failing(Boom()))
        #expect(try await store.load() == 1)
        #expect(try await store.save(2) == 2)
        #expect(try await base.load() == 2)
        try await store.remove()
        await #expect(throws: ValueStoreError.notFound) { try await base.load() }
    }

    @Test func aCacheThatFailedAWriteIsSkipped() async throws {
        // The cache keeps serving 1 but refuses writes and removes.
        let stale = ValueStore<Void, Int>(load: { 1 }, save: { _ in throw Boom() }, remove: { throw Boom() })
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.cached(by: stale)
        try await store.save(2)
        #expect(try await store.load() == 2)
    }

    @Test func cachedByPropagatesBaseErrors() async throws {
        let store = ValueStore<Void, Int>.failing(ValueStoreError(.corrupted)).cached(by: .inMemory())
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.save(1) }
    }

    @Test func cachedByAgreesWithTheBaseAfterConcurrentSaves() async throws {
        let cache = ValueStore<Void, Int>.inMemory()
        let base = ValueStore<Void, Int>.inMemory(0)
        let store = base.cached(by: cache)
        try await concurrently(200) { index in
            if index.isMultiple(of: 4) {
                _ = try await store.load()
            } else {
                try await store.save(index)
            }
        }
        #expect(try await cache.load() == base.load())
    }

    @Test func cachedByUpdateIsAtomic() async throws {
        let cache = ValueStore<Void, Int>.inMemory()
        let base = ValueStore<Void, Int>.inMemory(0)
        let store = base.cached(by: cache)
        try await concurrently(300) { _ in try await store.update { $0 += 1 } }
        #expect(try await base.load() == 300)
        #expect(try await cache.load() == 300)
    }

    @Test func cachedByForgetsTheCacheWhenASaveFailsAfterWriting() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.injecting(.failingSaves(afterWriting: true)).cached(by: .inMemory())
        #expect(try await store.load() == 1)  // now cached
        await #expect(throws: ValueStoreError.self) { try await store.save(2) }
        #expect(try await base.load() == 2, "the save wrote before it failed")
        #expect(try await store.load() == 2, "the cache must not keep serving the old value")
    }
}
