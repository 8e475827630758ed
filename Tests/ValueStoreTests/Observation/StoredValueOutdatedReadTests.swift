import Foundation
import Testing

@testable import ValueStore

/// `StoredValue`: a read that started before a failure to read was shown is older than that
/// failure, so it never clears it, and nothing is then written over the damaged data.
@MainActor @Suite struct StoredValueOutdatedReadTests {
    /// What another program writes over the file: not a number.
    static let damage = Data("damaged".utf8)

    @Test func aReloadThatStartedBeforeAFailureWasShownNeverClearsIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            try await ValueStore<Void, Int>.jsonFile(url).save(1)
            // Load 1 is `loaded`'s, load 2 the follower's first, load 3 the reload's.
            let gates = LoadGates(.jsonFile(url), holding: [3])
            let stored = await StoredValue.loaded(gates.store, default: 0)
            #expect(await eventually { gates.started == 2 })
            let reloading = Task { await stored.reload() }
            await gates.reached(3)  // the reload has read 1
            try await ValueStore<Void, Data>.file(url).save(Self.damage)
            #expect(await eventually { stored.error != nil })
            gates.release(3)
            await reloading.value
            #expect(stored.error != nil, "the reload read before the damage, and cleared its failure")
            stored.value = 5
            await #expect(throws: ValueStoreError.self) { try await stored.set(6) }
            #expect(try Data(contentsOf: url) == Self.damage)
        }
    }

    @Test func setsFirstReadThatStartedBeforeAFailureWasShownNeverClearsIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            try await ValueStore<Void, Int>.jsonFile(url).save(1)
            // Load 1 is the follower's first, load 2 the read `set` makes before its first write.
            let gates = LoadGates(.jsonFile(url), holding: [1, 2])
            let stored = StoredValue(gates.store, default: 0)
            await gates.reached(1)
            let setting = Task { try await stored.set(5) }
            await gates.reached(2)  // both reads have read 1
            try await ValueStore<Void, Data>.file(url).save(Self.damage)
            gates.release(1)  // the follower shows 1, then reads the damage
            #expect(await eventually { stored.error != nil })
            gates.release(2)
            await #expect(throws: ValueStoreError.self) { try await setting.value }
            #expect(try Data(contentsOf: url) == Self.damage)
            #expect(stored.error != nil)
        }
    }

    @Test func aReadThatStartsAfterTheFailureStillMakesItWritable() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let file = ValueStore<Void, Int>.jsonFile(url)
            try await file.save(1)
            let stored = await StoredValue.loaded(file, default: 0)
            try await ValueStore<Void, Data>.file(url).save(Self.damage)
            #expect(await eventually { stored.error != nil })
            try await ValueStore<Void, Data>.file(url).save(Data("7".utf8))
            await stored.reload()
            #expect(stored.error == nil)
            #expect(stored.value == 7)
            try await stored.set(8)
            #expect(try await file.load() == 8)
        }
    }
}
