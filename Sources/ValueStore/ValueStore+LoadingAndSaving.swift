// How a store without a transaction updates, and how `set` ends: the two steps every backend
// without an atomic read-modify-write shares.
extension ValueStore {
    /// An update that loads, runs the body, then saves or removes: not atomic.
    @inlinable
    static func loadingAndSaving(load: @escaping Load, save: @escaping Save, remove: @escaping Remove) -> Update {
        { environment, body in
            var value: Value?
            do {
                value = try await load(environment)
            } catch ValueStoreError.notFound {
                value = nil
            }
            try await body(&value)
            return try await saveOrRemove(value, environment, save: save, remove: remove)
        }
    }

    /// Saves `value`, or removes the stored value when `value` is `nil`, and returns what is
    /// stored: ``set(_:environment:)``, and an update without a transaction, end this way.
    @inlinable
    static func saveOrRemove(
        _ value: Value?,
        _ environment: Environment,
        save: Save,
        remove: Remove
    ) async throws -> Value? {
        guard let value else {
            try await remove(environment)
            return nil
        }
        return try await save(value, environment)
    }
}
