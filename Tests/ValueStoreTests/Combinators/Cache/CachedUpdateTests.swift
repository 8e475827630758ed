import Testing
import ValueStore

/// `cached().update` marks the base store's writes as the cache's own, so the cache does not
/// empty itself for them. Its body is the caller's code: a stream or a write started there, or
/// in a task started there, is not the cache's.
@Suite struct CachedUpdateTests {
    @Test func aStreamStartedInTheBodySeesTheCachesWrites() async throws {
        let cached = ValueStore<Void, Int>.inMemory(1).cached()
        var log: StateLog<Int>?
        try await cached.update { value in
            log = StateLog(cached.changes())  // iterated by a task started here
            value = 2
        }
        let states = try #require(log)
        #expect(await states.waitForLast("2"), "the stream saw the update's commit")
        try await cached.save(5)
        #expect(await states.waitForLast("5"), "the stream saw the cache's save")
    }

    @Test func aWriteFromATaskStartedInTheBodyEmptiesTheCache() async throws {
        let base = ValueStore<Void, Int>.inMemory(1)
        let cached = base.cached()
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        var late: Task<Int, any Error>?
        try await cached.update { value in
            late = Task {
                for await _ in gate { break }
                return try await base.save(9)  // not through the cache, after the update
            }
            value = 2
        }
        #expect(try await cached.load() == 2)
        open.yield()
        #expect(try await late?.value == 9)
        #expect(try await eventually { try await cached.load() == 9 }, "the cache saw a write that was not its own")
    }
}
