public import Foundation

extension Codec where Input: Codable & Sendable, Output == Data {
    /// Encodes values as JSON with default `JSONEncoder` and `JSONDecoder` settings.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Data>.inMemory().coded(Codec<Settings, Data>.json)
    /// ```
    ///
    /// Empty or malformed input fails with ``ValueStoreError/Code/corrupted``; well-formed JSON
    /// of the wrong shape fails with ``ValueStoreError/Code/decodingFailed``.
    public static var json: Self {
        json(encoder: JSONEncoder(), decoder: JSONDecoder())
    }

    /// Encodes values as JSON with the given encoder and decoder.
    ///
    /// ```swift
    /// let encoder = JSONEncoder()
    /// encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    /// let codec = Codec<Settings, Data>.json(encoder: encoder, decoder: JSONDecoder())
    /// ```
    ///
    /// - Parameters:
    ///   - encoder: Encodes values; configure it before passing it and do not change it after.
    ///   - decoder: Decodes values; configure it before passing it and do not change it after.
    /// - Returns: A JSON codec.
    public static func json(encoder: JSONEncoder, decoder: JSONDecoder) -> Self {
        dataFormat(
            "JSON",
            encode: { value in try encoder.encode(value) },
            decode: { data in try decoder.decode(Input.self, from: data) },
            parses: isJSON
        )
    }
}

/// Whether `data` is well-formed JSON, to tell malformed data from a value of the wrong type.
private func isJSON(_ data: Data) -> Bool {
    do {
        _ = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        return true
    } catch {
        return false
    }
}
