import Synchronization
public import ValueStore

extension ValueStore {
    /// The same store with failures or delays injected into its operations.
    ///
    /// ```swift
    /// let store = ValueStore<Void, Int>.inMemory(1).injecting(.failingSaves())
    /// await #expect(throws: ValueStoreError.self) { try await store.save(2) }
    /// ```
    ///
    /// `update` through it counts as a load and a save, so faults for both apply; then the base
    /// store's own update runs, so it stays atomic.
    ///
    /// - Parameter faults: What to inject; each applies to every call it matches.
    /// - Returns: A store that behaves like this one except where a fault applies.
    public func injecting(_ faults: Fault...) -> Self {
        let calls = CallCounter()
        let perform: @Sendable (Fault.Operation) async throws -> [any Error] = { operation in
            let call = calls.next()
            var after: [any Error] = []
            for effect in faults.compactMap({ $0.effect(call, operation) }) {
                switch effect {
                case .delay(let duration):
                    try await Task.sleep(for: duration)
                case .failBefore(let error):
                    throw error
                case .failAfter(let error):
                    after.append(error)
                }
            }
            return after
        }
        return Self(
            label: label,
            load: { environment in
                let after = try await perform(.load)
                let value = try await self.load(environment)
                if let error = after.first { throw error }
                return value
            },
            save: { value, environment in
                let after = try await perform(.save)
                let stored = try await self.save(value, environment)
                if let error = after.first { throw error }
                return stored
            },
            remove: { environment in
                let after = try await perform(.remove)
                try await self.remove(environment)
                if let error = after.first { throw error }
            },
            update: { environment, body in
                // An update reads and writes: faults for both apply, then the base store's own
                // update runs, so it stays atomic.
                let after = try await perform(.load) + perform(.save)
                let stored = try await self.update(environment, body)
                if let error = after.first { throw error }
                return stored
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}

/// Numbers calls from 1.
private final class CallCounter: Sendable {
    // Mutex is Sendable and guards the count; the class holds nothing else.
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
