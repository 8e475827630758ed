import ValueStore

/// Holds chosen loads of a store, by their number, after they have read and before they return:
/// reads that started before something the test then does.
///
/// ```swift
/// let gates = LoadGates(ValueStore<Void, Int>.jsonFile(url), holding: [2])
/// let reloading = Task { await stored.reload() }
/// await gates.reached(2)  // load 2 has read; it returns when released
/// // … damage the file …
/// gates.release(2)
/// ```
final class LoadGates: Sendable {
    /// The wrapped store: its loads are numbered from 1, in the order they start.
    let store: ValueStore<Void, Int>
    private let state = Shared(State())

    private struct State {
        var started = 0
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var released: Set<Int> = []
        var arrivals: [Int: CheckedContinuation<Void, Never>] = [:]
        var arrived: Set<Int> = []
    }

    /// Wraps `base`, holding the loads whose numbers are in `held`.
    init(_ base: ValueStore<Void, Int>, holding held: Set<Int>) {
        var store = base
        store.loadImmediately = nil  // the replaced load must not be bypassed
        let state = self.state
        store.load = { environment in
            let number = state.withLock { state -> Int in
                state.started += 1
                return state.started
            }
            let value = await Result { try await base.load(environment) }
            if held.contains(number) {
                let arrival = state.withLock { state in
                    state.arrived.insert(number)
                    return state.arrivals.removeValue(forKey: number)
                }
                arrival?.resume()
                await withCheckedContinuation { continuation in
                    let go = state.withLock { state in
                        if state.released.contains(number) { return true }
                        state.waiting[number] = continuation
                        return false
                    }
                    if go { continuation.resume() }
                }
            }
            return try value.get()
        }
        self.store = store
    }

    /// How many loads have started.
    var started: Int { state.withLock { $0.started } }

    /// Waits until load `number` has read and is held.
    func reached(_ number: Int) async {
        await withCheckedContinuation { continuation in
            let arrived = state.withLock { state in
                if state.arrived.contains(number) { return true }
                state.arrivals[number] = continuation
                return false
            }
            if arrived { continuation.resume() }
        }
    }

    /// Lets load `number` return what it read.
    func release(_ number: Int) {
        let waiting = state.withLock { state in
            state.released.insert(number)
            return state.waiting.removeValue(forKey: number)
        }
        waiting?.resume()
    }
}

extension Result where Failure == any Error {
    /// The outcome of an asynchronous throwing call.
    fileprivate init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
