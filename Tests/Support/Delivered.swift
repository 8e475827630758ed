package import ValueStore

/// Whether `states` shows `value` within 30 seconds; a wait that runs out fails by `name`.
///
/// ```swift
/// let states = laptop.store("theme", as: String.self).changes()
/// #expect(try await delivered("dark", to: states, "the laptop's stream showing the phone's save"))
/// ```
package func delivered<Value: Equatable & Sendable>(
    _ value: Value,
    to states: StoredStates<Value>,
    _ name: String
) async throws -> Bool {
    try await within(.seconds(30), name) {
        for await state in states where state.value == value {
            return true
        }
        return false
    }
}
