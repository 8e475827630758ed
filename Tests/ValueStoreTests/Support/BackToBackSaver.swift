import Testing

@testable import ValueStore

/// A task that saves back to back, a large number of times, until stopped.
final class BackToBackSaver: Sendable {
    /// How many saves the loop makes at most: it stops by itself after that many.
    static let bound = 200_000

    private let stopped = Shared(false)
    private let saves = Calls()
    private let running = Shared(true)
    private let second = Arrival<Void>()
    /// How many saves returned, after each one.
    private let counts: AsyncStream<Int>
    private let task: Task<Void, any Error>

    init(_ save: @escaping @Sendable (_ value: Int) async throws -> Void) {
        let (stopped, saves, running, second) = (stopped, saves, running, second)
        let (counts, counted) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
        self.counts = counts
        task = Task.detached {
            defer {
                running.value = false
                counted.finish()
            }
            for value in 1...Self.bound where !stopped.value {
                try await save(value)
                saves.increment()
                counted.yield(saves.value)
                if saves.value == 2 { second.deliver(()) }
            }
        }
    }

    /// Returns once a save returned after this call, or the loop ended. One caller at a time.
    func nextSave() async {
        let before = saves.value
        for await count in counts where count > before {
            return
        }
    }

    /// Returns once two saves returned.
    func started() async {
        _ = await second.wait()
    }

    /// Stops the loop and returns whether it was still saving, not stopped by its bound.
    func stop() -> Bool {
        let wasRunning = running.value
        stopped.value = true
        return wasRunning
    }

    /// Waits for the loop's end; throws a save's failure.
    func finished() async throws {
        try await task.value
    }

    /// Saves back to back through `store` while an update of it runs, and expects the update to
    /// end without error while the saves still go on (before the saver stops by its bound).
    static func expectAnUpdateNotStarved(in store: ValueStore<Void, Int>) async throws {
        try await store.save(0)
        let saver = BackToBackSaver { value in try await store.save(value) }
        await saver.started()
        let firstRun = Shared(true)
        let outcome = await unlessItHangs(timeout: .seconds(120)) {
            try await store.update { value in
                // The first run waits for one of the saver's saves, so the file changed since the
                // update read it, and the update must run again: it is then the saver's turn to
                // wait (waiting for a save again would wait for itself).
                if firstRun.value {
                    firstRun.value = false
                    await saver.nextSave()
                }
                value = -1
            }
        }
        let savedMeanwhile = saver.stop()
        #expect(throws: Never.self) { try #require(outcome, "the update ended").get() }
        #expect(savedMeanwhile, "the update committed while the saves went on")
        try await saver.finished()
    }
}
