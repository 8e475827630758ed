/// The version before the first one: a type with no values, which ends a chain of
/// ``VersionedValue`` types.
///
/// A first version never names it; it is the default ``VersionedValue/PreviousVersion``.
///
/// ```swift
/// struct SettingsV1: VersionedValue {   // PreviousVersion is NoPreviousVersion
///     static let version = 1
///     var name: String
/// }
/// ```
///
/// Nothing is ever stored as it: decoding it always fails, and no value exists to encode.
public enum NoPreviousVersion: VersionedValue {
    /// The chain ends here.
    public typealias PreviousVersion = NoPreviousVersion

    /// Below every real version; no data is ever stored with it.
    ///
    /// ```swift
    /// NoPreviousVersion.version   // Int.min
    /// ```
    public static var version: Int { .min }

    /// Fails: there is no version before the first.
    ///
    /// - Parameter decoder: The decoder, which is not read.
    /// - Throws: `DecodingError.dataCorrupted`, always.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "There is no version before the first")
        )
    }

    /// Never called: there are no values to encode.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: Never: no value reaches it.
    public func encode(to encoder: any Encoder) throws {
        switch self {}
    }
}
