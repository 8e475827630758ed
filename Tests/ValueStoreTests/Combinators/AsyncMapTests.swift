import Synchronization
import Testing
import ValueStore
import ValueStoreTesting

/// A stand-in for a service that seals and opens secrets, with a suspension point in each call.
struct Vault: Sendable {
    func seal(_ secret: String) async throws -> [UInt8] {
        await Task.yield()
        return secret.utf8.map { $0 ^ 0x5A }
    }

    func open(_ sealed: [UInt8]) async throws -> String {
        await Task.yield()
        return String(decoding: sealed.map { $0 ^ 0x5A }, as: UTF8.self)
    }
}

/// A stored value that is not `Equatable`, so an update through an async map cannot compare it.
struct Opaque: Sendable {
    var count: Int
}

@Suite struct AsyncMapTests {
    @Test func convertsBothWays() async throws {
        let vault = Vault()
        let sealedStore = ValueStore<Void, [UInt8]>.inMemory()
        let secret = sealedStore.map(
            load: { sealed in try await vault.open(sealed) },
            save: { secret in try await vault.seal(secret) }
        )
        #expect(try await secret.save("hunter2") == "hunter2")
        #expect(try await sealedStore.load() != Array("hunter2".utf8))
        #expect(try await secret.load() == "hunter2")
        try await ValueStoreLaws.check(secret, samples: "a", "b")
    }

    @Test func synchronousClosuresStillChooseTheSynchronousMap() async throws {
        // The same call with `await` inside picks the asynchronous overload; both behave alike.
        let base = ValueStore<Void, Int>.inMemory(2)
        let sync = base.map(load: { String($0) }, save: { Int($0)! })
        let async = base.map(load: { await Self.describe($0) }, save: { Int($0)! })
        #expect(try await sync.load() == "2")
        #expect(try await async.load() == "2")
    }

    static func describe(_ value: Int) async -> String {
        await Task.yield()
        return String(value)
    }

    @Test func errorsPropagateUnchangedAndAFailedSaveWritesNothing() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let failingLoad = base.map(
            load: { (_: Int) async throws -> String in throw Boom(id: 1) },
            save: { (value: String) async throws -> Int in Int(value)! }
        )
        await #expect(throws: Boom(id: 1)) { try await failingLoad.load() }
        let failingSave = base.map(
            load: { (value: Int) async throws -> String in String(value) },
            save: { (_: String) async throws -> Int in throw Boom(id: 2) }
        )
        await #expect(throws: Boom(id: 2)) { try await failingSave.save("5") }
        await #expect(throws: Boom(id: 2)) { try await failingSave.update { $0 += "1" } }
        #expect(try await base.load() == 1)
    }

    @Test func absenceAndRemovePassThrough() async throws {
        let base = ValueStore<Void, Int>.inMemory()
        let store = base.map(load: { await Self.describe($0) }, save: { Int($0)! })
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        await #expect(throws: ValueStoreError.notFound) { try await store.update { $0 += "0" } }
        #expect(try await store.update(()) { $0 = "7" } == "7")
        #expect(try await base.load() == 7)
        #expect(try await store.update(()) { $0 = nil } == nil)
        await #expect(throws: ValueStoreError.notFound) { try await base.load() }
    }

    @Test func saveConvertsBackWhenTheBaseChangesTheValue() async throws {
        let clamping = ValueStore<Void, Int>(load: { 10 }, save: { min($0, 10) }, remove: {})
        let store = clamping.map(load: { await Self.describe($0) }, save: { Int($0)! })
        #expect(try await store.save("99") == "10")
    }

    @Test func concurrentUpdatesLoseNothingWhenTheStoredTypeIsEquatable() async throws {
        let base = ValueStore<Void, Int>.inMemory(0)
        let store = base.map(
            load: { stored in
                await Task.yield()
                return stored
            },
            save: { value in
                await Task.yield()
                return value
            }
        )
        try await concurrently(200) { _ in try await store.update { $0 += 1 } }
        #expect(try await base.load() == 200)
    }

    @Test func anUpdateConvertsWhatTheBaseUpdateFoundNeverAStaleLoad() async throws {
        // `load` is stale (a cache that missed a write); only `update` sees the truth. The
        // conversions run inside the base's update, on what it found.
        let truth = ValueStore<Void, Int>.inMemory(5)
        let stale = ValueStore<Void, Int>(
            label: "stale",
            load: { _ in 1 },
            save: truth.save,
            remove: truth.remove,
            update: truth.update
        )
        let converted = Mutex<[Int]>([])
        let store = stale.map(
            load: { stored in
                await Task.yield()
                converted.withLock { $0.append(stored) }
                return stored
            },
            save: { value in
                await Task.yield()
                return value
            }
        )
        #expect(try await store.update { $0 += 1 } == 6)
        #expect(converted.withLock { $0 } == [5])
    }

    @Test func bodyErrorsWriteNothing() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let store = base.map(load: { await Self.describe($0) }, save: { Int($0)! })
        await #expect(throws: Boom(id: 4)) { try await store.update { _ in throw Boom(id: 4) } }
        #expect(try await base.load() == 1)
    }

    @Test func updatesAreAtomicForAStoredTypeThatIsNotEquatable() async throws {
        let base = ValueStore<Void, Opaque>.inMemory(Opaque(count: 0))
        let store = base.map(
            load: { (stored: Opaque) async -> Int in
                await Task.yield()
                return stored.count
            },
            save: { (value: Int) async -> Opaque in Opaque(count: value) }
        )
        try await concurrently(200) { _ in try await store.update { $0 += 1 } }
        #expect(try await base.load().count == 200)
    }
}
