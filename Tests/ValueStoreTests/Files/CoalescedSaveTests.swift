import Dispatch
import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore
@testable import ValueStoreTestHelper

/// Saves that arrive while a commit to their file is in flight share the next commit, and none
/// returns before a durable write that holds its value or a later arrival. A held commit holds
/// one of the I/O threads, never one of the cooperative pool's (``HeldCommits`` checks it), and
/// the saves that wait for it hold no thread.
@Suite(.timeLimit(.minutes(2))) struct CoalescedSaveTests {
    /// A file system that holds the first rename over `path` until released (and the second,
    /// with `holdingTheSecond`), counts the renames over it, and fails the one numbered `failing`.
    ///
    /// A held rename holds the thread that called it, as a slow disk does: a commit runs on the
    /// I/O threads (see `BlockingIO`), so the hold takes none of the cooperative pool's threads,
    /// and ``firstCommitHeld()`` fails the test if it did. Bounded against hanging: a rename held
    /// for 60 seconds goes through, and ``timedOut`` says so.
    final class HeldCommits: Sendable {
        let path: String
        let released = DispatchSemaphore(value: 0)
        let secondReleased = DispatchSemaphore(value: 0)
        let holdsTheSecond: Bool
        let renames = Shared(0)
        let failing: Int?
        /// How many renames were held on a thread that is not an I/O thread.
        let heldOffIOThreads = Shared(0)
        /// Whether a hold reached its bound.
        let timedOut = Shared(false)
        let held: AsyncStream<Void>
        private let heldContinuation: AsyncStream<Void>.Continuation

        init(_ url: URL, failing: Int? = nil, holdingTheSecond: Bool = false) {
            self.failing = failing
            holdsTheSecond = holdingTheSecond
            path = url.standardizedFileURL.path(percentEncoded: false)
            (held, heldContinuation) = AsyncStream.makeStream(of: Void.self)
        }

        var fileSystem: FileSystem {
            var fileSystem = FileSystem.live
            let live = FileSystem.live
            fileSystem.rename = { source, destination in
                guard destination == self.path else { return try live.rename(source, destination) }
                let count = self.renames.withLock { count -> Int in
                    count += 1
                    return count
                }
                if count == 1 {
                    self.hold(until: self.released)
                } else if count == 2 && self.holdsTheSecond {
                    self.hold(until: self.secondReleased)
                }
                if count == self.failing {
                    throw FileSystemError(operation: "rename", code: EIO)
                }
                try live.rename(source, destination)
            }
            return fileSystem
        }

        /// Holds the calling thread, a commit's, until `release` is signalled, or 60 seconds pass.
        private func hold(until release: DispatchSemaphore) {
            if !BlockingIO.isCurrentThread {
                heldOffIOThreads.withLock { $0 += 1 }
            }
            heldContinuation.yield()
            if release.wait(timeout: .now() + 60) == .timedOut {
                timedOut.withLock { $0 = true }
            }
        }

        /// Waits until the first commit is held in its rename, on an I/O thread.
        func firstCommitHeld() async {
            for await _ in held { break }
            #expect(heldOffIOThreads.value == 0, "a held commit must hold an I/O thread, not the cooperative pool's")
        }

        /// Waits until the second commit is held in its rename, on an I/O thread.
        func secondCommitHeld() async {
            await firstCommitHeld()
        }
    }

    static func store(_ url: URL, _ commits: HeldCommits) -> ValueStore<Void, Int> {
        ValueStore<Void, Data>.file(url, options: .default, fileSystem: commits.fileSystem).coded(Codec<Int, Data>.json)
    }

    /// Starts saves of `values` one at a time, each once the one before waits in the queue, so
    /// their arrival order is known. Stops at the first that does not come to wait: each after it
    /// would wait out the bound.
    static func saves(
        of values: ClosedRange<Int>, to store: ValueStore<Void, Int>, key: String
    ) async -> [Task<Void, any Error>] {
        var tasks: [Task<Void, any Error>] = []
        for (index, value) in values.enumerated() {
            tasks.append(Task { try await store.save(value) })
            let waits = await untilWaiting(index + 1, for: key)
            #expect(waits, "save \(value) waits for the next commit")
            if !waits { break }
        }
        return tasks
    }

    /// Waits until `count` saves wait for the next commit of `key`, for at most 20 seconds, and
    /// says whether exactly `count` do.
    @discardableResult
    static func untilWaiting(_ count: Int, for key: String) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while CommitQueue.shared.waitingWrites(for: key) < count && ContinuousClock.now < deadline {
            await Task.yield()
        }
        return CommitQueue.shared.waitingWrites(for: key) == count
    }

    @Test func savesThatArriveDuringACommitShareOneMoreCommit() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let commits = HeldCommits(url)
            let store = Self.store(url, commits)
            let key = DurableFile(url, options: .default, fileSystem: .live).commitKey
            let first = Task { try await store.save(0) }
            await commits.firstCommitHeld()
            let burst = await Self.saves(of: 1...200, to: store, key: key)
            _ = commits.released.signal()
            _ = try await first.value
            for (index, save) in burst.enumerated() {
                try await save.value
                let onDisk = try await store.load()
                #expect(onDisk >= index + 1, "a save returned before its value or a later one was on disk")
            }
            #expect(try await store.load() == 200, "the last arrival is what the file holds")
            #expect(commits.renames.value == 2, "200 saves during one commit cost exactly one more")
            #expect(!commits.timedOut.value, "no commit may have been held until the bound")
        }
    }

    @Test func aFailedCommitFailsEveryWaiterOfItAndTheNextSaveSucceeds() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let commits = HeldCommits(url, failing: 2)  // the group's commit
            let store = Self.store(url, commits)
            let key = DurableFile(url, options: .default, fileSystem: .live).commitKey
            let first = Task { try await store.save(0) }
            await commits.firstCommitHeld()
            let burst = await Self.saves(of: 1...50, to: store, key: key)
            _ = commits.released.signal()
            _ = try await first.value
            for save in burst {
                await #expect(throws: ValueStoreError.self) { try await save.value }
            }
            #expect(try await store.load() == 0, "the previous value survives")
            try await store.save(99)
            #expect(try await store.load() == 99)
            #expect(commits.renames.value == 3)
        }
    }

    // MARK: - Only the committed value is encoded

    /// A value that counts its encodings through its encoder's `userInfo`, and refuses to be
    /// encoded when negative.
    struct Counted: Codable, Sendable {
        static let encodings = CodingUserInfoKey(rawValue: "encodings")!
        var value: Int

        init(value: Int) { self.value = value }

        init(from decoder: any Decoder) throws {
            value = try decoder.singleValueContainer().decode(Int.self)
        }

        func encode(to encoder: any Encoder) throws {
            (encoder.userInfo[Self.encodings] as? Calls)?.increment()
            guard value >= 0 else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "negative"))
            }
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// A `jsonFile` store over `commits`' file system, counting its encodings.
    static func countingJSONStore(_ url: URL, _ commits: HeldCommits, encodings: Calls) -> ValueStore<Void, Int> {
        let encoder = JSONEncoder()
        encoder.userInfo[Counted.encodings] = encodings
        return ValueStore<Void, Counted>.jsonFile(
            url, encoder: encoder, decoder: JSONDecoder(), options: .default, fileSystem: commits.fileSystem
        ).map(load: \.value, save: { Counted(value: $0) })
    }

    @Test func savesThatShareACommitEncodeOnlyTheValueCommitted() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let commits = HeldCommits(url)
            let encodings = Calls()
            let store = Self.countingJSONStore(url, commits, encodings: encodings)
            let key = DurableFile(url, options: .default, fileSystem: .live).commitKey
            let first = Task { try await store.save(0) }
            await commits.firstCommitHeld()
            let burst = await Self.saves(of: 1...200, to: store, key: key)
            _ = commits.released.signal()
            _ = try await first.value
            for save in burst {
                try await save.value
            }
            #expect(try await store.load() == 200)
            #expect(encodings.value == 2, "the first value and the last arrival's; \(encodings.value) were encoded")
        }
    }

    @Test func aValueThatFailsToEncodeFailsOnlyItsOwnSave() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let commits = HeldCommits(url)
            let store = Self.countingJSONStore(url, commits, encodings: Calls())
            let key = DurableFile(url, options: .default, fileSystem: .live).commitKey
            let first = Task { try await store.save(0) }
            await commits.firstCommitHeld()
            let burst = await Self.saves(of: 1...2, to: store, key: key)
            let failing = Task { try await store.save(-1) }  // the last arrival, which cannot be encoded
            await Self.untilWaiting(3, for: key)
            _ = commits.released.signal()
            _ = try await first.value
            await #expect { try await failing.value } throws: { ($0 as? ValueStoreError)?.code == .encodingFailed }
            for save in burst {
                try await save.value
            }
            #expect(try await store.load() == 2, "the arrival before the one that failed is committed")
        }
    }

    @Test func aGroupCommitSignalsAsTheWriterOfTheValueItWrites() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let commits = HeldCommits(url, holdingTheSecond: true)
            let store = Self.store(url, commits)
            let file = DurableFile(url, options: .default, fileSystem: commits.fileSystem)
            let cache = ChangeOrigin.next()  // a cache's writer number
            // What a cache watches: every change but those it writes itself.
            let signals = ChangeOrigin.$writer.withValue(cache) { file.changeSignals() }
            var watch = signals.makeAsyncIterator()
            let first = Task { try await store.save(0) }
            await commits.firstCommitHeld()
            // The cache's save leads the next group; another store's save of 2 joins it, later.
            let cachedSave = Task { try await ChangeOrigin.$writer.withValue(cache) { try await store.save(1) } }
            await Self.untilWaiting(1, for: file.commitKey)
            let later = Task { try await store.save(2) }
            await Self.untilWaiting(2, for: file.commitKey)
            _ = commits.released.signal()
            _ = try await first.value
            #expect(await watch.next() != nil)  // the first commit's change
            await commits.secondCommitHeld()
            _ = commits.secondReleased.signal()
            _ = try await cachedSave.value
            _ = try await later.value
            #expect(try await store.load() == 2)
            #expect(await hasSignal(signals), "the cache was not told of the value that replaced its own")
        }
    }

    @Test func aKilledWriterOfBurstsNeverLeavesTheFileOlderThanABurstThatReturned() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "data/payload.json")
            let store = ValueStore<Void, CrashPayload>.jsonFile(url)
            var lastReported = 0
            for _ in 0..<40 {
                let writer = try HelperProcess("burst-loop", url.path(percentEncoded: false))
                for _ in 0..<Int.random(in: 0...3) {
                    guard let line = await writer.nextLine() else { break }
                    lastReported = max(lastReported, Int(line) ?? 0)
                }
                writer.kill()
                lastReported = max(lastReported, writer.lines().compactMap { Int($0) }.last ?? 0)
                guard let payload = try await store.optional().load() else {
                    #expect(lastReported == 0, "a burst was reported, yet the file is gone")
                    continue
                }
                #expect(payload.checksum == CrashPayload.checksum(sequence: payload.sequence, filler: payload.filler))
                #expect(payload.sequence >= lastReported, "the file is older than a burst whose saves returned")
                #expect(payload.sequence <= lastReported + 1, "the file is from the future")
            }
            #expect(lastReported > 0, "the writer never finished a burst")
        }
    }
}
