import Foundation
import ValueStoreSync

// A record and its stamps, as their `Codable` conformances write them: every push request and
// most of a push's answer are made of these.

extension SyncRecord {
    /// Writes the record's fields in their declaration order, `nil` ones left out.
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", key)
            if let value {
                writer.key("value")
                writer.base64(value)
            }
            writer.key("stamp")
            stamp.write(to: &writer)
            if let origin {
                writer.key("origin")
                origin.write(to: &writer)
            }
            if let base {
                writer.key("base")
                base.write(to: &writer)
            }
            writer.key("replaces")
            writer.array(replaces) { writer, stamp in stamp.write(to: &writer) }
            writer.field("policy", policy.rawValue)
            writer.key("isRestoring")
            writer.bool(isRestoring)
            if let version {
                writer.field("version", version.rawValue)
            }
        }
    }

    /// Reads a record in any key order; a field `JSONDecoder` would take as absent (`null`, or
    /// no key) is `nil`.
    init(wire reader: inout WireJSONReader) throws {
        var key: String?
        var value: Data??
        var stamp: HybridTimestamp?
        var origin: HybridTimestamp??
        var base: HybridTimestamp??
        var replaces: [HybridTimestamp]?
        var policy: Policy?
        var isRestoring: Bool?
        var version: ServerVersion??
        try reader.object { reader, name in
            switch name {
            case "key": try reader.assign(&key) { try $0.string() }
            case "value": try reader.assign(&value) { try $0.optional { try $0.base64() } }
            case "stamp": try reader.assign(&stamp) { try HybridTimestamp(wire: &$0) }
            case "origin": try reader.assign(&origin) { try $0.optional { try HybridTimestamp(wire: &$0) } }
            case "base": try reader.assign(&base) { try $0.optional { try HybridTimestamp(wire: &$0) } }
            case "replaces": try reader.assign(&replaces) { try $0.array { try HybridTimestamp(wire: &$0) } }
            case "policy": try reader.assign(&policy) { try WireJSONReader.required(Policy(rawValue: $0.string())) }
            case "isRestoring": try reader.assign(&isRestoring) { try $0.bool() }
            case "version": try reader.assign(&version) { try $0.optional { ServerVersion(try $0.integer()) } }
            default: throw WireJSONReader.Unread()
            }
        }
        self.init(
            key: try WireJSONReader.required(key), value: value ?? nil, stamp: try WireJSONReader.required(stamp),
            origin: origin ?? nil, base: base ?? nil, replaces: try WireJSONReader.required(replaces),
            policy: try WireJSONReader.required(policy), isRestoring: try WireJSONReader.required(isRestoring),
            version: version ?? nil)
    }
}

extension HybridTimestamp {
    /// Writes the stamp: `{"milliseconds":…,"counter":…,"replica":"…"}`.
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("milliseconds", milliseconds)
            writer.field("counter", counter)
            writer.field("replica", replica.rawValue)
        }
    }

    /// Reads a stamp in any key order.
    init(wire reader: inout WireJSONReader) throws {
        var milliseconds: Int64?
        var counter: UInt32?
        var replica: String?
        try reader.object { reader, name in
            switch name {
            case "milliseconds": try reader.assign(&milliseconds) { try $0.integer() }
            case "counter": try reader.assign(&counter) { try $0.integer() }
            case "replica": try reader.assign(&replica) { try $0.string() }
            default: throw WireJSONReader.Unread()
            }
        }
        self.init(
            milliseconds: try WireJSONReader.required(milliseconds), counter: try WireJSONReader.required(counter),
            replica: ReplicaID(try WireJSONReader.required(replica)))
    }
}

extension SyncChangeName {
    /// Writes the name: its key and its stamp.
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", key)
            writer.key("stamp")
            stamp.write(to: &writer)
        }
    }

    /// Reads a name in any key order.
    init(wire reader: inout WireJSONReader) throws {
        var key: String?
        var stamp: HybridTimestamp?
        try reader.object { reader, name in
            switch name {
            case "key": try reader.assign(&key) { try $0.string() }
            case "stamp": try reader.assign(&stamp) { try HybridTimestamp(wire: &$0) }
            default: throw WireJSONReader.Unread()
            }
        }
        self.init(key: try WireJSONReader.required(key), stamp: try WireJSONReader.required(stamp))
    }
}
