import ValueStore

/// Pauses a store's first load or save until the test resumes it: a task that read or wrote and
/// then stalled, so a test can change things in the gap.
///
/// ```swift
/// let old = Stall.firstLoad(of: ValueStore<Void, Int>.inMemory(7))
/// let stalled = Task { try await old.store.load() }
/// await old.reached()
/// // … change things …
/// old.resume()
/// ```
final class Stall: Sendable {
    /// The wrapped store.
    let store: ValueStore<Void, Int>
    private let arrived: AsyncStream<Void>
    private let arrivedContinuation: AsyncStream<Void>.Continuation
    private let go: AsyncStream<Void>
    private let goContinuation: AsyncStream<Void>.Continuation

    private init(_ wrap: (_ pause: @escaping @Sendable () async -> Void) -> ValueStore<Void, Int>) {
        let (arrived, arrivedContinuation) = AsyncStream.makeStream(of: Void.self)
        let (go, goContinuation) = AsyncStream.makeStream(of: Void.self)
        (self.arrived, self.arrivedContinuation, self.go, self.goContinuation) =
            (arrived, arrivedContinuation, go, goContinuation)
        let calls = Calls()
        store = wrap {
            calls.increment()
            guard calls.value == 1 else { return }
            arrivedContinuation.yield()
            for await _ in go { break }
        }
    }

    /// The first load reads its value, then pauses before returning it.
    static func firstLoad(of base: ValueStore<Void, Int>) -> Stall {
        Stall { pause in
            var store = base
            store.load = { environment in
                let value = try await base.load(environment)
                await pause()
                return value
            }
            store.loadImmediately = nil  // the replaced load must not be bypassed
            return store
        }
    }

    /// The first save writes its value, then pauses before returning.
    static func firstSave(of base: ValueStore<Void, Int>) -> Stall {
        Stall { pause in
            var store = base
            store.save = { value, environment in
                let stored = try await base.save(value, environment)
                await pause()
                return stored
            }
            return store
        }
    }

    /// Waits until the first call has done its work and paused.
    func reached() async {
        for await _ in arrived { break }
    }

    /// Lets the paused call return.
    func resume() {
        goContinuation.yield()
    }
}
