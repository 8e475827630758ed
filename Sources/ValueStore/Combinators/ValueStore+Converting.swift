// The plumbing of the combinators that convert what passes through them: their update, and how
// a save tells whether the base stored exactly what it was given.

extension ValueStore {
    /// The base store's ``update`` seen through a conversion: inside the base's transaction it
    /// converts what is stored with `load`, runs `body`, and stores what `save` makes of the
    /// result. Returns the value the body left when the base stored exactly what it was given,
    /// and converts back what it stored otherwise. ``map(load:save:)-((Value)->NewValue,_)``,
    /// its asynchronous twin and ``versioned(_:legacyVersion:)`` update through it.
    @inlinable
    func updateConverting<NewValue>(
        _ environment: Environment,
        load: nonisolated(nonsending) (_ stored: Value) async throws -> NewValue,
        save: nonisolated(nonsending) (_ value: NewValue) async throws -> Value,
        body: (_ value: inout NewValue?) async throws -> Void
    ) async throws -> NewValue? {
        var result: NewValue?
        var written: Value?
        let stored = try await update(environment) { stored in
            var value: NewValue? = nil
            if let stored {
                value = try await load(stored)
            }
            try await body(&value)
            stored = nil
            if let value {
                stored = try await save(value)
            }
            (result, written) = (value, stored)
        }
        guard let stored else { return nil }
        if let written, isUnchanged(stored, from: written) {
            return result
        }
        return try await load(stored)
    }
}

/// Whether a store returned exactly the value it was given, so that a conversion can return the
/// caller's value instead of converting the stored one back (decoding every saved value twice).
///
/// Only equatable values can tell; for others the stored value is converted back.
@inlinable
func isUnchanged<Value>(_ stored: Value, from given: Value) -> Bool {
    guard let stored = stored as? any Equatable else { return false }
    return stored.isEqual(to: given)
}

extension Equatable {
    @inlinable
    func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
