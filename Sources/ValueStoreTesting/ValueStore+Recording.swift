public import ValueStore

extension ValueStore where Value: Sendable {
    /// The same store, recording every operation and its outcome into `recorder`.
    ///
    /// ```swift
    /// let recorder = ValueStoreRecorder<Settings>()
    /// let spy = ValueStore<Void, Settings>.inMemory(.standard).recording(into: recorder)
    /// ```
    ///
    /// `update` through a recording store runs the base store's own update, so it stays atomic, and
    /// is recorded as the load it read and the save or remove it wrote.
    ///
    /// - Parameter recorder: Receives a record when each operation finishes.
    /// - Returns: A store that behaves like this one and records what it does.
    public func recording(into recorder: ValueStoreRecorder<Value>) -> Self {
        Self(
            label: label,
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
            },
            update: { environment, body in
                // The base store's own update, so it stays atomic; recorded as the load it read
                // and the save or remove it wrote.
                var write: ValueStoreRecorder<Value>.Operation?
                do {
                    let stored = try await self.update(environment) { value in
                        recorder.record(.load, value.map { .success($0) } ?? .failure(ValueStoreError.notFound))
                        try await body(&value)
                        write = value.map { .save($0) } ?? .remove
                    }
                    if let write {
                        recorder.record(write, .success(stored))
                    }
                    return stored
                } catch {
                    if let write {
                        recorder.record(write, .failure(error))
                    }
                    throw error
                }
            },
            changeSignals: changeSignals
        ).holdingSecrets(holdsSecrets)
    }
}
