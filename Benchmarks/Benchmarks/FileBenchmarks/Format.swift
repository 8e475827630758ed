import Foundation
import ValueStore

/// An encoding the file stores offer, with the codec the floors use and the store that uses it.
///
/// The floors encode and decode with the same settings as the store: default `JSONEncoder` and
/// `JSONDecoder`, and binary property lists.
struct Format<Value: Codable & Sendable>: Sendable {
    /// How row names spell the format: "JSON", "plist".
    let name: String
    /// How row names spell the store's constructor: "jsonFile", "plistFile".
    let storeName: String
    /// The file name the benchmarks write, in their own directory.
    let fileName: String
    let encode: @Sendable (_ value: Value) throws -> Data
    let decode: @Sendable (_ data: Data) throws -> Value
    /// The store of this format at a location, with default (durable) options.
    let store: @Sendable (_ url: URL) -> ValueStore<Void, Value>

    static var json: Self {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        return Self(
            name: "JSON",
            storeName: "jsonFile",
            fileName: "value.json",
            encode: { value in try encoder.encode(value) },
            decode: { data in try decoder.decode(Value.self, from: data) },
            store: { url in .jsonFile(url) }
        )
    }

    static var plist: Self {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let decoder = PropertyListDecoder()
        return Self(
            name: "plist",
            storeName: "plistFile",
            fileName: "value.plist",
            encode: { value in try encoder.encode(value) },
            decode: { data in try decoder.decode(Value.self, from: data) },
            store: { url in .plistFile(url) }
        )
    }
}
