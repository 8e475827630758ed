import Testing
import ValueStore

/// `cached(load:)`: the store as the cache of a slower source, fetched only where nothing is
/// stored.
@Suite struct CachedLoadTests {
    @Test func returnsTheStoredValueWithoutFetching() async throws {
        let fetches = Calls()
        let store = ValueStore<Void, Int>.inMemory(7)
        let value = try await store.cached(load: {
            fetches.increment()
            return 1
        })
        #expect(value == 7)
        #expect(fetches.value == 0)
    }

    @Test func fetchesSavesAndReturnsWhatWasSavedWhereNothingIsStored() async throws {
        let store = ValueStore<Void, Int>.inMemory()
        #expect(try await store.cached(load: { 11 }) == 11)
        #expect(try await store.load() == 11)
        let clamping = ValueStore<Void, Int>(
            load: { _ in throw ValueStoreError.notFound },
            save: { value, _ in min(value, 10) },
            remove: { _ in }
        )
        #expect(try await clamping.cached(load: { 11 }) == 10, "what the store saved")
    }

    @Test func theFetchCanReceiveTheEnvironmentAsIn01() async throws {
        let box = ValueStore<Void, Int>.inMemory()
        let store = ValueStore<Int, Int>(
            load: { _ in try await box.load() },
            save: { value, offset in try await box.save(value + offset) },
            remove: { _ in try await box.remove() }
        )
        let fetched = try await store.cached(load: { offset in offset * 2 }, environment: 3)
        #expect(fetched == 9, "fetched 6 for environment 3, saved with its offset")
        let stored = try await store.cached(load: { (_: Int) in 100 }, environment: 3)
        #expect(stored == 9, "nothing fetched where a value is stored")
    }

    @Test func anUnreadableValueIsThrownNeverReplaced() async throws {
        let fetches = Calls()
        let damaged = ValueStore<Void, String>.inMemory("sepia").coded(Codec<Theme, String>.rawRepresentable)
        await #expect(throws: ValueStoreError.self) {
            try await damaged.cached(load: {
                fetches.increment()
                return .light
            })
        }
        #expect(fetches.value == 0)
    }

    @Test func theFetchsErrorIsThrownAndNothingSaved() async throws {
        let store = ValueStore<Void, Int>.inMemory()
        await #expect(throws: Boom()) { try await store.cached(load: { throw Boom() }) }
        await #expect(throws: ValueStoreError.notFound) { try await store.load() }
    }

    @Test func takesAnEnvironment() async throws {
        let store = ValueStore<Void, Int>.inMemory().require(String.self)
        #expect(try await store.cached(load: { 3 }, environment: "session") == 3)
        #expect(try await store.load("session") == 3)
    }

    /// The Combinators guide's example: a saved catalog in front of a server.
    @Test func theGuidesExample() async throws {
        let server = CatalogServer()
        let savedCatalog = ValueStore<Void, [String]>.inMemory()
        let catalog = try await savedCatalog.cached(load: { try await server.catalog() })
        #expect(catalog == ["tea"])
        #expect(try await savedCatalog.cached(load: { try await server.catalog() }) == ["tea"])
        #expect(await server.requests == 1)
    }
}

/// A slow source that counts its requests.
actor CatalogServer {
    private(set) var requests = 0

    func catalog() throws -> [String] {
        requests += 1
        return ["tea"]
    }
}
