import Foundation
import ValueStoreSync

// A push's request and its answer, as their `Codable` conformances write them.

extension SyncPushRequest: WireJSONCodable {
    init(wire reader: inout WireJSONReader) throws {
        var account: String?
        var replica: String?
        var epoch: UUID??
        var seen: Int64?
        var cursor: Int64?
        var changes: [SyncRecord]?
        try reader.object { reader, name in
            switch name {
            case "account": try reader.assign(&account) { try $0.string() }
            case "replica": try reader.assign(&replica) { try $0.string() }
            case "epoch": try reader.assign(&epoch) { try $0.optional { try $0.uuid() } }
            case "seen": try reader.assign(&seen) { try $0.integer() }
            case "cursor": try reader.assign(&cursor) { try $0.integer() }
            case "changes": try reader.assign(&changes) { try $0.array { try SyncRecord(wire: &$0) } }
            default: throw WireJSONReader.Unread()
            }
        }
        self.init(
            account: try WireJSONReader.required(account), replica: ReplicaID(try WireJSONReader.required(replica)),
            epoch: epoch ?? nil, seen: ServerVersion(try WireJSONReader.required(seen)),
            cursor: ServerVersion(try WireJSONReader.required(cursor)), changes: try WireJSONReader.required(changes))
    }

    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("account", account)
            writer.field("replica", replica.rawValue)
            if let epoch {
                writer.field("epoch", epoch.uuidString)
            }
            writer.field("seen", seen.rawValue)
            writer.field("cursor", cursor.rawValue)
            writer.key("changes")
            writer.array(changes) { writer, change in change.write(to: &writer) }
        }
    }
}

extension SyncPushResponse: WireJSONCodable {
    init(wire reader: inout WireJSONReader) throws {
        var epoch: UUID?
        var serverTime: Int64?
        var refusal: SyncRefusal??
        var outcomes: [Outcome]?
        var settled: [SyncChangeName]??
        try reader.object { reader, name in
            switch name {
            case "epoch": try reader.assign(&epoch) { try $0.uuid() }
            case "serverTime": try reader.assign(&serverTime) { try $0.integer() }
            case "refusal":
                try reader.assign(&refusal) {
                    try $0.optional { try WireJSONReader.required(SyncRefusal(rawValue: $0.string())) }
                }
            case "outcomes": try reader.assign(&outcomes) { try $0.array { try Outcome(wire: &$0) } }
            case "settled":
                try reader.assign(&settled) { try $0.optional { try $0.array { try SyncChangeName(wire: &$0) } } }
            default: throw WireJSONReader.Unread()
            }
        }
        self.init(
            epoch: try WireJSONReader.required(epoch), serverTime: try WireJSONReader.required(serverTime),
            refusal: refusal ?? nil, outcomes: try WireJSONReader.required(outcomes), settled: settled ?? nil)
    }

    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("epoch", epoch.uuidString)
            writer.field("serverTime", serverTime)
            if let refusal {
                writer.field("refusal", refusal.rawValue)
            }
            writer.key("outcomes")
            writer.array(outcomes) { writer, outcome in outcome.write(to: &writer) }
            if let settled {
                writer.key("settled")
                writer.array(settled) { writer, name in name.write(to: &writer) }
            }
        }
    }
}

extension SyncPushResponse.Outcome {
    /// Writes the outcome as Swift's synthesized `Codable` does for an enumeration: an object
    /// with one key, the case, whose object holds the associated value as `_0` (left out when
    /// `nil`), or nothing.
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            switch self {
            case .accepted(let version):
                writer.key("accepted")
                writer.object { $0.field("_0", version.rawValue) }
            case .overtaken(let record):
                writer.key("overtaken")
                writer.object { $0.associated(record) }
            case .lost(let record):
                writer.key("lost")
                writer.object { writer in record.map { writer.associated($0) } }
            case .mergeNeeded(let record):
                writer.key("mergeNeeded")
                writer.object { writer in record.map { writer.associated($0) } }
            case .superseded:
                writer.key("superseded")
                writer.object { _ in }
            case .tooFarAhead:
                writer.key("tooFarAhead")
                writer.object { _ in }
            case .rejected(let reason):
                writer.key("rejected")
                writer.object { $0.field("_0", reason) }
            }
        }
    }

    /// Reads an outcome: one key, its case.
    init(wire reader: inout WireJSONReader) throws {
        var outcome: Self?
        try reader.object { reader, name in
            // A second case in the same object is JSONDecoder's to judge.
            try reader.assign(&outcome) { reader in
                switch name {
                case "accepted": .accepted(ServerVersion(try reader.associated { try $0.integer() }))
                case "overtaken": .overtaken(try reader.associated { try SyncRecord(wire: &$0) })
                case "lost": .lost(try reader.associatedIfPresent { try SyncRecord(wire: &$0) })
                case "mergeNeeded": .mergeNeeded(try reader.associatedIfPresent { try SyncRecord(wire: &$0) })
                case "superseded": try reader.noAssociatedValue(.superseded)
                case "tooFarAhead": try reader.noAssociatedValue(.tooFarAhead)
                case "rejected": .rejected(try reader.associated { try $0.string() })
                default: throw WireJSONReader.Unread()
                }
            }
        }
        self = try WireJSONReader.required(outcome)
    }
}

extension WireJSONWriter {
    /// A case's associated record, under the key Swift's synthesized `Codable` gives it.
    fileprivate mutating func associated(_ record: SyncRecord) {
        key("_0")
        record.write(to: &self)
    }
}

extension WireJSONReader {
    /// A case's object holding its one associated value, `_0`.
    fileprivate mutating func associated<Value>(_ read: (inout WireJSONReader) throws -> Value) throws -> Value {
        try WireJSONReader.required(associatedIfPresent(read))
    }

    /// A case's object holding its one optional associated value, `_0`: `nil` when absent or
    /// `null`.
    fileprivate mutating func associatedIfPresent<Value>(
        _ read: (inout WireJSONReader) throws -> Value
    ) throws -> Value? {
        var value: Value??
        try object { reader, name in
            guard name == "_0" else { throw Unread() }
            try reader.assign(&value) { try $0.optional(read) }
        }
        return value ?? nil
    }

    /// A case's empty object.
    fileprivate mutating func noAssociatedValue<Value>(_ value: Value) throws -> Value {
        try object { _, _ in throw Unread() }
        return value
    }
}
