#if PostgreSQL
import Foundation
import ValueStore

/// Changes to several keys of a ``PostgresValueTable``, committed together by
/// ``PostgresValueTable/batch(_:)``.
///
/// ```swift
/// try await table.batch { batch in
///     try batch.set(Flags(), for: "flags")
///     batch.remove("legacy")
/// }
/// ```
public struct PostgresBatch: Sendable {
    var changes: [(key: String, value: Data?)] = []

    init() {}

    /// Sets `key` to `value`, encoded as JSON, when the batch commits.
    ///
    /// ```swift
    /// try batch.set(Flags(), for: "flags")
    /// ```
    ///
    /// - Parameters:
    ///   - value: Any `Encodable` value; it is encoded now, so a failure throws here.
    ///   - key: The key to set.
    /// - Throws: ``/ValueStore/ValueStoreError/Code/encodingFailed`` when the value cannot be encoded.
    public mutating func set(_ value: some Encodable, for key: String) throws {
        do {
            changes.append((key, try JSONEncoder().encode(value)))
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: "PostgreSQL batch, key \(PostgresKey.quoted(key))", underlyingError: error)
        }
    }

    /// Removes `key` when the batch commits; removing a missing key is fine.
    ///
    /// ```swift
    /// batch.remove("legacy")
    /// ```
    ///
    /// - Parameter key: The key to remove.
    public mutating func remove(_ key: String) {
        changes.append((key, nil))
    }
}
#endif
