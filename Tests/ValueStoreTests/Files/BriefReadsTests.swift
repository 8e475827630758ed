import Foundation
import Testing

@testable import ValueStore

/// A brief read runs on the pool, one at a time, while reads are quick; every other read goes to
/// the I/O threads. Each test has brief reads of its own, so other tests' loads never meet it.
@Suite struct BriefReadsTests {
    /// Whether the `@concurrent` code of a read runs on an I/O thread.
    @concurrent static func readsOnAnIOThread() async -> Bool {
        BlockingIO.isCurrentThread
    }

    @Test func aLoneReadRunsOnThePool() async {
        let reads = BriefReads(slow: .seconds(600))  // never slow, on the busiest machine
        #expect(await reads.run { await Self.readsOnAnIOThread() } == false)
        #expect(await reads.run { await Self.readsOnAnIOThread() } == false, "the first read let go")
    }

    @Test func aReadWhileAnotherRunsGoesToTheIOThreads() async {
        let reads = BriefReads(slow: .seconds(600))  // never slow, on the busiest machine
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        async let first = reads.run {
            enter.yield()
            for await _ in released { break }
            return await Self.readsOnAnIOThread()
        }
        for await _ in entered { break }
        #expect(await reads.run { await Self.readsOnAnIOThread() }, "the pool already had its read")
        release.yield()
        #expect(await first == false)
        #expect(await reads.run { await Self.readsOnAnIOThread() } == false)
    }

    @Test func afterASlowReadEveryReadGoesToTheIOThreadsForTheBackOff() async {
        // Every read is slow here: longer than zero.
        let reads = BriefReads(slow: .zero, backOff: .seconds(600))
        #expect(await reads.run { await Self.readsOnAnIOThread() } == false)
        for _ in 0..<3 {
            #expect(await reads.run { await Self.readsOnAnIOThread() })
        }
    }

    @Test func theBackOffEnds() async {
        let reads = BriefReads(slow: .zero, backOff: .zero)
        for _ in 0..<3 {
            #expect(await reads.run { await Self.readsOnAnIOThread() } == false)
        }
    }

    @Test func aFailingReadLetsGo() async {
        let reads = BriefReads(slow: .seconds(600))  // never slow, on the busiest machine
        await #expect(throws: ValueStoreError.notFound) {
            try await reads.run { () async throws(ValueStoreError) in throw ValueStoreError(.notFound) }
        }
        #expect(await reads.run { await Self.readsOnAnIOThread() } == false)
    }

    @Test func aFileStoresLoadWhileAnotherBriefReadRunsReadsOnAnIOThread() async throws {
        try await TemporaryDirectory.with { directory in
            let calls = SystemCalls()
            let store = ValueStore<Void, Data>.file(
                directory.appending(path: "count.json"), options: .default, fileSystem: calls.fileSystem)
            try await store.save(Data("1".utf8))
            // Holds the process's brief read until the load below is done. Another test's read
            // may hold it first: the holder then runs on an I/O thread, and tries again.
            let (entered, enter) = AsyncStream<Bool>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            let holder = Task {
                while true {
                    let held = await BriefReads.shared.run {
                        let held = await !Self.readsOnAnIOThread()
                        enter.yield(held)
                        if held {
                            for await _ in released { break }
                        }
                        return held
                    }
                    if held { return }
                }
            }
            for await held in entered where held { break }
            let before = calls.offIOThreads.count
            #expect(try await store.load() == Data("1".utf8))
            release.yield()
            await holder.value
            #expect(calls.offIOThreads.count == before, "the load ran off the I/O threads")
        }
    }
}
