import Foundation

/// A wire type the fast path writes and reads: ``WireJSON`` uses it for the bodies a push sends,
/// and `JSONEncoder` and `JSONDecoder` for every other.
///
/// ```swift
/// extension SyncPushRequest: WireJSONCodable { … }
/// ```
protocol WireJSONCodable: Codable {
    /// Writes the value's JSON: the keys and values its `Codable` conformance writes, which any
    /// JSON decoder reads to the same value.
    func write(to writer: inout WireJSONWriter)
    /// Reads the value, or throws ``WireJSONReader/Unread`` for what the fast path leaves to
    /// `JSONDecoder`.
    init(wire reader: inout WireJSONReader) throws
}

/// The JSON of the HTTP wire's bodies, for the client and the service alike: one place that
/// chooses between the fast path of a push's bodies (``WireJSONCodable``) and Foundation's
/// coders.
///
/// A body the fast path does not read (anything but what the coders themselves write) is decoded
/// again by `JSONDecoder`, whose value or error is the answer: the fast path changes how quickly
/// a body is read, never what it reads as.
///
/// ```swift
/// let body = try WireJSON.encode(request)
/// let same = try WireJSON.decode(SyncPushRequest.self, from: body)
/// ```
enum WireJSON {
    /// The value's JSON.
    static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        guard let fast = value as? any WireJSONCodable else {
            return try JSONEncoder().encode(value)
        }
        var writer = WireJSONWriter()
        fast.write(to: &writer)
        return writer.data
    }

    /// The value `data` holds.
    ///
    /// - Throws: `JSONDecoder`'s error when the bytes are not a `Value`.
    static func decode<Value: Decodable>(_: Value.Type, from data: Data) throws -> Value {
        if let fast = Value.self as? any WireJSONCodable.Type {
            do {
                if let value = try WireJSONReader.read(data, { try fast.init(wire: &$0) }) as? Value {
                    return value
                }
            } catch is WireJSONReader.Unread {
                // Not read by the fast path: the decoder's value or error, below, counts.
            }
        }
        return try JSONDecoder().decode(Value.self, from: data)
    }
}
