/// A position in one account's history on the server: the account's head when a write committed.
///
/// The server bumps the account's head under the account's lock for every write and gives the
/// write the new head as its version, so versions follow the order in which writes committed,
/// and a replica that has pulled up to a version has seen every write at or below it: none
/// commits later with a smaller one. Version zero is the empty history.
///
/// ```swift
/// let cursor = ServerVersion(42)
/// cursor > .zero   // true
/// ```
public struct ServerVersion: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The version as a number.
    ///
    /// ```swift
    /// let number = version.rawValue
    /// ```
    public var rawValue: Int64

    /// A version from its number.
    ///
    /// ```swift
    /// let version = ServerVersion(7)
    /// ```
    ///
    /// - Parameter rawValue: The version as a number; zero or more.
    public init(_ rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// The empty history, before the first write.
    ///
    /// ```swift
    /// var cursor = ServerVersion.zero
    /// ```
    public static let zero = Self(0)

    /// The version after this one.
    var next: Self { Self(rawValue + 1) }

    /// The version as a decimal number.
    ///
    /// ```swift
    /// print(ServerVersion(7))   // 7
    /// ```
    public var description: String { String(rawValue) }

    /// Orders versions by number.
    ///
    /// ```swift
    /// ServerVersion(1) < ServerVersion(2)   // true
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: A version.
    ///   - rhs: Another version.
    /// - Returns: Whether `lhs` came first.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// Decodes a version from its number.
    ///
    /// ```swift
    /// let version = try JSONDecoder().decode(ServerVersion.self, from: Data("7".utf8))
    /// ```
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when the value is not an integer.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the version as its number.
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(ServerVersion(7))   // 7
    /// ```
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
