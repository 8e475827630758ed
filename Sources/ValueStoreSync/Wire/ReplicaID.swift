import Foundation

/// The identity of one replica: one account's state in one directory on one device.
///
/// A replica makes its identity when it first opens its directory, and makes a new one when it
/// finds that the directory was copied (see ``SyncReplica``), so two devices never share one.
/// It breaks ties between ``HybridTimestamp``s and keys the server's record of each replica's
/// pushes and pulls.
///
/// ```swift
/// let id = ReplicaID("9F1C2E4A-7B3D-4C55-9A0E-2B8D6F7A1C3E")
/// print(id)   // 9F1C2E4A-7B3D-4C55-9A0E-2B8D6F7A1C3E
/// ```
public struct ReplicaID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The identity as text; a UUID for the identities replicas make.
    ///
    /// ```swift
    /// let text = id.rawValue
    /// ```
    public var rawValue: String

    /// An identity from its text.
    ///
    /// ```swift
    /// let id = ReplicaID("device-1")
    /// ```
    ///
    /// - Parameter rawValue: The identity as text.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// A new identity no other replica has: a random UUID.
    static func random() -> Self {
        Self(UUID().uuidString)
    }

    /// The identity as text.
    ///
    /// ```swift
    /// print(replica.id.description)
    /// ```
    public var description: String { rawValue }

    /// Orders identities by their text, byte for byte, so every replica and every server breaks
    /// ties between timestamps the same way.
    ///
    /// ```swift
    /// ReplicaID("a") < ReplicaID("b")   // true
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: An identity.
    ///   - rhs: Another identity.
    /// - Returns: Whether `lhs` sorts first.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    /// Decodes an identity from its text.
    ///
    /// ```swift
    /// let id = try JSONDecoder().decode(ReplicaID.self, from: Data(#""device-1""#.utf8))
    /// ```
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` when the value is not text.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the identity as its text.
    ///
    /// ```swift
    /// let json = try JSONEncoder().encode(ReplicaID("device-1"))   // "device-1"
    /// ```
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
