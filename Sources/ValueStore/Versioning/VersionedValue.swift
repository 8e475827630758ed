/// A value whose stored shape has a schema version, and which knows how to migrate from the
/// version before it.
///
/// Declare the first version with its number only; each later version names the one before it
/// and converts from it. ``ValueStore/versioned(_:legacyVersion:)`` stores the version beside the
/// value and, on load, migrates older data one step at a time up to the current type.
///
/// ```swift
/// struct SettingsV1: VersionedValue {
///     static let version = 1
///     var name: String
/// }
///
/// struct Settings: VersionedValue {
///     static let version = 2
///     typealias PreviousVersion = SettingsV1
///     var first: String
///     var last: String
///
///     init(migrating old: SettingsV1) throws {
///         let parts = old.name.split(separator: " ", maxSplits: 1)
///         first = parts.first.map(String.init) ?? ""
///         last = parts.count > 1 ? String(parts[1]) : ""
///     }
/// }
/// ```
///
/// Versions must rise along the chain: each ``PreviousVersion`` has a lower ``version`` than the
/// type that names it. The first version's ``PreviousVersion`` is ``NoPreviousVersion``, which
/// ends the chain; a protocol extension supplies it and its `init(migrating:)`.
///
/// > Important: Once a version has shipped, its type is frozen: renaming or retyping a
/// > property of `SettingsV1` makes every file an old app wrote unreadable. Keep a stored sample
/// > of each shipped version and check it with `VersionedValueLaws` from `ValueStoreTesting`.
public protocol VersionedValue: Codable, Sendable {
    /// The version before this one, or ``NoPreviousVersion`` for the first version.
    associatedtype PreviousVersion: VersionedValue = NoPreviousVersion

    /// This type's schema version, stored beside every value saved as this type.
    ///
    /// ```swift
    /// static let version = 2
    /// ```
    static var version: Int { get }

    /// Converts a value of the previous version to this one.
    ///
    /// ```swift
    /// init(migrating old: SettingsV1) throws {
    ///     first = old.name
    ///     last = ""
    /// }
    /// ```
    ///
    /// It runs in memory, when a store loads or updates data stored by an older version; the
    /// store writes the result only when the app saves or updates.
    ///
    /// - Parameter previous: The value as the previous version stored it.
    /// - Throws: Any error, when the old value cannot be converted. The load then throws
    ///   ``ValueStoreError/Code/decodingFailed`` naming the stored version and the types tried,
    ///   with this error as its ``ValueStoreError/underlyingError``.
    init(migrating previous: PreviousVersion) throws
}

extension VersionedValue where PreviousVersion == NoPreviousVersion {
    /// The first version has nothing to migrate from: ``NoPreviousVersion`` has no values.
    ///
    /// ```swift
    /// struct SettingsV1: VersionedValue {   // no init(migrating:) to write
    ///     static let version = 1
    ///     var name: String
    /// }
    /// ```
    ///
    /// - Parameter previous: A value that cannot exist.
    public init(migrating previous: NoPreviousVersion) {
        switch previous {}
    }
}
