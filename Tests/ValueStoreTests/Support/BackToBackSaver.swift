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
    private let task: Task<Void, any Error>

    init(_ save: @escaping @Sendable (_ value: Int) async throws -> Void) {
        let (stopped, saves, running, second) = (stopped, saves, running, second)
        task = Task.detached {
            defer { running.value = false }
            for value in 1...Self.bound where !stopped.value {
                try await save(value)
                saves.increment()
                if saves.value == 2 { second.deliver(()) }
            }
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
        let outcome = await unlessItHangs(timeout: .seconds(120)) {
            try await store.update { value in
                // Room for the saver to commit while the body runs, as a body that awaits
                // anything gives; not a measure of speed.
                try await Task.sleep(for: .milliseconds(10))
                value = -1
            }
        }
        let savedMeanwhile = saver.stop()
        #expect(throws: Never.self) { try #require(outcome, "the update ended").get() }
        #expect(savedMeanwhile, "the update committed while the saves went on")
        try await saver.finished()
    }
}
