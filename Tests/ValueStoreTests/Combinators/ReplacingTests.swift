import Foundation
import Testing
import ValueStore
import ValueStoreTestSupport
import ValueStoreTesting

@Suite struct ReplacingTests {
    @Test func migratesTheOldValueOnce() async throws {
        let old = ValueStore<Void, Int>.inMemory(7)
        let new = ValueStore<Void, Int>.inMemory()
        let store = new.replacing(old)
        #expect(try await store.load() == 7)
        #expect(try await new.load() == 7)
        await #expect(throws: ValueStoreError.notFound) { try await old.load() }
    }

    @Test func prefersTheNewValue() async throws {
        let old = ValueStore<Void, Int>.inMemory(1)
        let new = ValueStore<Void, Int>.inMemory(2)
        #expect(try await new.replacing(old).load() == 2)
        #expect(try await old.load() == 1, "the old store is read only when the new one is empty")
    }

    @Test func absentInBothIsAbsent() async throws {
        let store = ValueStore<Void, Int>.inMemory().replacing(.inMemory())
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        try await ValueStoreLaws.check(store, samples: 1, 2)
    }

    @Test func savesWriteOnlyTheNewStore() async throws {
        let old = ValueStore<Void, Int>.inMemory(1)
        let new = ValueStore<Void, Int>.inMemory()
        try await new.replacing(old).save(5)
        #expect(try await new.load() == 5)
        #expect(try await old.load() == 1)
    }

    @Test func removeRemovesBoth() async throws {
        let old = ValueStore<Void, Int>.inMemory(1)
        let new = ValueStore<Void, Int>.inMemory(2)
        try await new.replacing(old).remove()
        await #expect(throws: ValueStoreError.notFound) { try await old.load() }
        await #expect(throws: ValueStoreError.notFound) { try await new.load() }
    }

    @Test func corruptNewDataIsNotReplacedByOldData() async throws {
        let old = ValueStore<Void, Int>.inMemory(1)
        let store = ValueStore<Void, Int>.failing(ValueStoreError(.corrupted)).replacing(old)
        await #expect(throws: ValueStoreError(.corrupted)) { try await store.load() }
        #expect(try await old.load() == 1)
    }

    @Test func oldErrorsPropagate() async throws {
        let store = ValueStore<Void, Int>.inMemory().replacing(.failing(Boom()))
        await #expect(throws: Boom()) { try await store.load() }
    }

    @Test func aFailedMigrationSaveKeepsTheOldValue() async throws {
        let old = ValueStore<Void, Int>.inMemory(1)
        let new = ValueStore<Void, Int>(
            load: { throw ValueStoreError.notFound }, save: { _ in throw Boom() }, remove: {})
        await #expect(throws: Boom()) { try await new.replacing(old).load() }
        #expect(try await old.load() == 1)
    }

    @Test func removeFailureInTheOldStoreKeepsTheNewValue() async throws {
        let old = ValueStore<Void, Int>(load: { 1 }, save: { $0 }, remove: { throw Boom() })
        let new = ValueStore<Void, Int>.inMemory(2)
        await #expect(throws: Boom()) { try await new.replacing(old).remove() }
        #expect(try await new.load() == 2, "the new value stays, so the old one is never migrated back")
    }

    @Test func concurrentLoadsMigrateOnce() async throws {
        let old = ValueStore<Void, Int>.inMemory(9)
        let new = ValueStore<Void, Int>.inMemory()
        let store = new.replacing(old)
        try await concurrently(100) { _ in
            let value = try await store.load()
            #expect(value == 9)
        }
        await #expect(throws: ValueStoreError.notFound) { try await old.load() }
    }

    @Test func updateMigratesThenUpdatesAtomically() async throws {
        let old = ValueStore<Void, Int>.inMemory(100)
        let new = ValueStore<Void, Int>.inMemory()
        let store = new.replacing(old)
        try await concurrently(300) { _ in try await store.update { $0 += 1 } }
        #expect(try await new.load() == 400)
        await #expect(throws: ValueStoreError.notFound) { try await old.load() }
    }

    // MARK: - Stale migrations (a load that read the old value, then stalled)

    @Test func aStaleMigrationNeverOverwritesANewerValue() async throws {
        let old = Stall.firstLoad(of: ValueStore<Void, Int>.inMemory(7))
        let new = ValueStore<Void, Int>.inMemory()
        let store = new.replacing(old.store)
        let stalled = Task { try await store.load() }
        await old.reached()
        #expect(try await store.load() == 7)
        try await store.update { $0 = 42 }
        old.resume()
        #expect(try await stalled.value == 42, "the stale load returns what the store holds now")
        #expect(try await new.load() == 42)
    }

    @Test func aStaleMigrationNeverBringsBackARemovedValue() async throws {
        let old = Stall.firstLoad(of: ValueStore<Void, Int>.inMemory(7))
        let new = ValueStore<Void, Int>.inMemory()
        let store = new.replacing(old.store)
        let stalled = Task { try await store.load() }
        await old.reached()
        #expect(try await store.load() == 7)
        try await store.remove()
        old.resume()
        await #expect(throws: ValueStoreError.notFound) { try await stalled.value }
        await #expect(throws: ValueStoreError.notFound) { try await new.load() }
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }

    @Test(arguments: ["update", "remove"])
    func aStaleMigrationInAnotherProcessWritesNothing(change: String) async throws {
        try await TemporaryDirectory.with { directory in
            let oldURL = directory.appending(path: "old.json")
            let newURL = directory.appending(path: "new.json")
            let store = ValueStore<Void, Int>.jsonFile(newURL).replacing(.jsonFile(oldURL))
            try await ValueStore<Void, Int>.jsonFile(oldURL).save(7)
            let helper = try HelperProcess(
                "stalled-migration", oldURL.path(percentEncoded: false), newURL.path(percentEncoded: false))
            #expect(await helper.nextLine() == "read")
            #expect(try await store.load() == 7)
            if change == "update" {
                try await store.update { $0 = 42 }
            } else {
                try await store.remove()
            }
            try helper.send("go")
            let printed = await helper.nextLine()
            #expect(await helper.exitStatus() == 0)
            let stored = try await ValueStore<Void, Int>.jsonFile(newURL).optional().load()
            if change == "update" {
                #expect(printed == "42")
                #expect(stored == 42)
            } else {
                #expect(printed == "notFound")
                #expect(stored == nil)
            }
        }
    }
}
