public import Foundation

extension Codec where Input: Codable & Sendable, Output == Data {
    /// Encodes values as binary property lists.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Data>.inMemory().coded(Codec<Settings, Data>.propertyList)
    /// ```
    ///
    /// Empty or malformed input fails with ``ValueStoreError/Code/corrupted``; a well-formed
    /// property list of the wrong shape fails with ``ValueStoreError/Code/decodingFailed``.
    public static var propertyList: Self {
        propertyList(format: .binary)
    }

    /// Encodes values as property lists in the given format.
    ///
    /// ```swift
    /// let readable = Codec<Settings, Data>.propertyList(format: .xml)
    /// ```
    ///
    /// - Parameter format: `.binary` (compact and fast) or `.xml` (readable in a text editor).
    ///   Decoding accepts either.
    /// - Returns: A property-list codec.
    public static func propertyList(format: PropertyListSerialization.PropertyListFormat) -> Self {
        dataFormat(
            "property list",
            encode: { value in
                let encoder = PropertyListEncoder()
                encoder.outputFormat = format
                return try encoder.encode(value)
            },
            decode: { data in try PropertyListDecoder().decode(Input.self, from: data) },
            parses: isPropertyList
        )
    }
}

/// Whether `data` is a well-formed property list, to tell malformed data from a value of the
/// wrong type.
private func isPropertyList(_ data: Data) -> Bool {
    do {
        _ = try PropertyListSerialization.propertyList(from: data, format: nil)
        return true
    } catch {
        return false
    }
}
