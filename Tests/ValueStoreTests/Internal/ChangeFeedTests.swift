import Synchronization
import Testing
import ValueStore

/// A remote source of signals says through its feed whether it can vouch that none was missed:
/// `cached()` answers from memory only while it can, with a value loaded in its current epoch,
/// and `changes()` reports a feed that failed as its state.
@Suite struct ChangeFeedTests {
    /// A store over `base` whose signals come from `signals`, behind `feed`, as a PostgreSQL
    /// table's come from its listener; it counts its loads.
    static func remote(
        over base: ValueStore<Void, Int>,
        feed: ChangeFeed,
        signals: ChangeBroadcaster,
        loads: Calls
    ) -> ValueStore<Void, Int> {
        ValueStore<Void, Int>(
            load: { _ in
                loads.increment()
                return try await base.load()
            },
            save: { value, _ in try await base.save(value) },
            remove: { _ in try await base.remove() },
            changeSignals: { _ in
                feed.record()
                return signals.signals()
            }
        )
    }

    struct ListenerDown: Error {}

    @Test func aCacheReadsTheBaseWhileItsFeedDoesNotFollow() async throws {
        let feed = ChangeFeed()
        let loads = Calls()
        let cached = Self.remote(over: .inMemory(1), feed: feed, signals: ChangeBroadcaster(), loads: loads).cached()
        #expect(try await cached.load() == 1)
        #expect(try await cached.load() == 1)
        #expect(loads.value == 2, "doubtful: every load reads the base")
        #expect(try cached.loadImmediately?(()) == nil)
        feed.follow()
        #expect(try await cached.load() == 1)
        #expect(try await cached.load() == 1)
        #expect(try cached.loadImmediately?(()) == 1)
        #expect(loads.value == 3, "following: one load, then hits")
        feed.fail(ListenerDown())
        #expect(try await cached.load() == 1)
        #expect(loads.value == 4, "failed: loads read the base again")
    }

    @Test func aCacheDropsAValueLoadedBeforeItsFeedFollowedAgain() async throws {
        let feed = ChangeFeed()
        feed.follow()
        let loads = Calls()
        let base = ValueStore<Void, Int>.inMemory(1)
        let cached = Self.remote(over: base, feed: feed, signals: ChangeBroadcaster(), loads: loads).cached()
        #expect(try await cached.load() == 1)
        #expect(try await cached.load() == 1)
        #expect(loads.value == 1)
        // Written while the source was deaf, unsignalled; then it listens again: a new epoch.
        try await base.save(2)
        feed.doubt()
        feed.follow()
        #expect(try cached.loadImmediately?(()) == nil)
        #expect(try await cached.load() == 2)
        #expect(try await cached.load() == 2)
        #expect(loads.value == 2)
    }

    @Test func aStreamReportsAFeedThatFailedThenTheValueOnceItFollows() async throws {
        let feed = ChangeFeed()
        let signals = ChangeBroadcaster()
        let store = Self.remote(over: .inMemory(1), feed: feed, signals: signals, loads: Calls())
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1", "doubtful is not a failure")
        feed.fail(ValueStoreError(.unavailable, reason: "cannot follow changes: a standby"))
        signals.signalAll()
        #expect(await states.next()?.summary == "failed(unavailable)")
        feed.follow()
        signals.signalAll()
        #expect(await states.next()?.summary == "1")
    }

    @Test func aStreamWhoseSignalsFinishEnds() async throws {
        let signals = ChangeBroadcaster()
        let store = Self.remote(over: .inMemory(1), feed: ChangeFeed(), signals: signals, loads: Calls())
        var states = store.changes().makeAsyncIterator()
        #expect(await states.next()?.summary == "1")
        signals.finishAll()
        #expect(await states.next() == nil)
    }
}
