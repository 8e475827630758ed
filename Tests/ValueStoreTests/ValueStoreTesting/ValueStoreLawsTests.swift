import Testing
import ValueStore
import ValueStoreTesting

@Suite struct ValueStoreLawsTests {
    func violation(of store: ValueStore<Void, Int>) async -> StoreLawViolation? {
        await #expect(throws: StoreLawViolation.self) {
            try await ValueStoreLaws.check(store, samples: 1, 2)
        }
    }

    @Test func acceptsALawfulStore() async throws {
        try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory(5), samples: 1, 2)
    }

    @Test func catchesALoadThatIgnoresSaves() async throws {
        let store = ValueStore<Void, Int>(load: { throw ValueStoreError.notFound }, save: { $0 }, remove: {})
        let found = await violation(of: store)
        #expect(found?.law == "round trip")
        #expect(found?.details.hasPrefix("loading after saving 1 threw No value is stored") == true)
    }

    @Test func catchesAnImmediateLoadThatDisagreesWithLoad() async throws {
        var stale = ValueStore<Void, Int>.inMemory()
        stale.loadImmediately = { _ in 1 }
        let found = await violation(of: stale)
        #expect(found?.law == "immediate agrees")
        #expect(found?.details == "loadImmediately after a remove returned 1")
    }

    @Test func catchesAStoreThatNeverForgets() async throws {
        #expect(await violation(of: .constant(0))?.law == "absent is notFound")
    }

    @Test func catchesAbsenceReportedAsAnotherError() async throws {
        let box = ValueStore<Void, Int>.inMemory()
        let store = box.mapError { _ in Boom() }
        let found = await violation(of: store)
        #expect(found?.law == "absent is notFound")
        #expect(found?.details.contains("Boom") == true)
    }

    @Test func catchesARemoveOfNothingThatThrows() async throws {
        let box = ValueStore<Void, Int>.inMemory()
        var store = box
        store.remove = { _ in
            _ = try await box.load()
            try await box.remove()
        }
        let found = await violation(of: store)
        #expect(found?.law == "double remove")
        #expect(found?.details.hasPrefix("removing before the check threw") == true)
    }

    @Test func catchesASecondRemoveThatThrows() async throws {
        let removals = Calls()
        let box = ValueStore<Void, Int>.inMemory()
        var store = box
        store.remove = { _ in
            removals.increment()
            if removals.value == 2 { throw Boom() }
            try await box.remove()
        }
        #expect(await violation(of: store)?.law == "double remove")
    }

    @Test func catchesARoundTripThatChangesTheValue() async throws {
        let box = ValueStore<Void, Int>.inMemory()
        let store = ValueStore<Void, Int>(
            load: { try await box.load() + 1 },
            save: { try await box.save($0) },
            remove: { try await box.remove() }
        )
        let found = await violation(of: store)
        #expect(found?.law == "round trip")
        #expect(found?.description == "The store breaks the law 'round trip': saved 1 but loaded 2.")
    }

    @Test func catchesASaveThatReturnsSomethingElse() async throws {
        let box = ValueStore<Void, Int>.inMemory()
        var store = box
        store.save = { value, environment in
            _ = try await box.save(value, environment)
            return 0
        }
        #expect(await violation(of: store)?.law == "save returns")
    }

    @Test func requiresDifferentSamples() async throws {
        let found = await #expect(throws: StoreLawViolation.self) {
            try await ValueStoreLaws.check(ValueStore<Void, Int>.inMemory(), samples: 1, 1)
        }
        #expect(found?.law == "samples")
    }

    @Test func leavesTheStoreEmpty() async throws {
        let store = ValueStore<Void, Int>.inMemory(9)
        try await ValueStoreLaws.check(store, samples: 1, 2)
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }
}
