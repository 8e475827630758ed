public import ValueStore

extension ValueStore where Value: Sendable {
    /// The same store, recording every operation and its outcome into `recorder`.
    ///
    /// ```swift
    /// let recorder = ValueStoreRecorder<Settings>()
    /// let spy = ValueStore<Void, Settings>.inMemory(.standard).recording(into: recorder)
    /// ```
    ///
    /// `update` through a recording store loads and saves through it, so both are recorded.
    ///
    /// - Parameter recorder: Receives a record when each operation finishes.
    /// - Returns: A store that behaves like this one and records what it does.
    public func recording(into recorder: ValueStoreRecorder<Value>) -> Self {
        Self(
            load: { environment in
                do {
                    let value = try await self.load(environment)
                    recorder.record(.load, .success(value))
                    return value
                } catch {
                    recorder.record(.load, .failure(error))
                    throw error
                }
            },
            save: { value, environment in
                do {
                    let stored = try await self.save(value, environment)
                    recorder.record(.save(value), .success(stored))
                    return stored
                } catch {
                    recorder.record(.save(value), .failure(error))
                    throw error
                }
            },
            remove: { environment in
                do {
                    try await self.remove(environment)
                    recorder.record(.remove, .success(nil))
                } catch {
                    recorder.record(.remove, .failure(error))
                    throw error
                }
            }
        )
    }
}
