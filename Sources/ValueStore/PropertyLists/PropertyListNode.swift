public import Foundation

/// One property-list value, as a Sendable tree: what a settings file holds under each key.
///
/// The file is parsed into nodes once and written back from them, so a key this version of the
/// app does not know keeps its exact type (an integer stays an integer, a Boolean a Boolean)
/// across every save.
@usableFromInline
enum PropertyListNode: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case unsignedInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListNode])
    case dictionary([String: PropertyListNode])
    /// A keyed archiver's object reference (a binary property list's `UID`, 1 to 16 big-endian
    /// bytes), which no `Codable` value or Foundation property-list object is: kept as it was
    /// read, and written back byte for byte. Only ``BinaryPropertyList`` reads and writes it.
    case uid(Data)
}

// MARK: - Foundation's objects

extension PropertyListNode {
    /// The node for an object `PropertyListSerialization` produced, or `nil` for anything else.
    init?(object: Any) {
        // Foundation on Linux hands out arrays and dictionaries of optionals.
        if let optional = object as? any OptionalObject {
            guard let wrapped = optional.wrappedObject else { return nil }
            self.init(object: wrapped)
            return
        }
        switch object {
        case let value as Bool where type(of: object) == Bool.self:
            self = .boolean(value)
        case let value as String:
            self = .string(value)
        case let value as Data:
            self = .data(value)
        case let value as Date:
            self = .date(value)
        case let number as NSNumber:
            self.init(number: number)
        case let array as [Any]:
            var nodes: [PropertyListNode] = []
            nodes.reserveCapacity(array.count)
            for element in array {
                guard let node = PropertyListNode(object: element) else { return nil }
                nodes.append(node)
            }
            self = .array(nodes)
        case let dictionary as [String: Any]:
            var nodes: [String: PropertyListNode] = [:]
            for (key, element) in dictionary {
                guard let node = PropertyListNode(object: element) else { return nil }
                nodes[key] = node
            }
            self = .dictionary(nodes)
        case let dictionary as [AnyHashable: Any]:
            var nodes: [String: PropertyListNode] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String, let node = PropertyListNode(object: element) else { return nil }
                nodes[key] = node
            }
            self = .dictionary(nodes)
        default:
            return nil
        }
    }

    /// A number, told apart by its stored type: a Boolean (`CFBoolean` on Apple platforms), an
    /// integer or a real.
    private init(number: NSNumber) {
        #if canImport(Darwin)
        if CFGetTypeID(number) == CFBooleanGetTypeID() {
            self = .boolean(number.boolValue)
            return
        }
        #else
        // Foundation on Linux boxes Booleans in a class of their own too.
        if type(of: number) == type(of: NSNumber(value: true)) {
            self = .boolean(number.boolValue)
            return
        }
        #endif
        switch String(cString: number.objCType) {
        case "f", "d":
            self = .real(number.doubleValue)
        case "Q", "L", "I", "S", "C":
            self = .unsignedInteger(number.uint64Value)
        default:
            self = .integer(number.int64Value)
        }
    }

    /// The object `PropertyListSerialization` writes for this node.
    var object: Any {
        switch self {
        case .string(let value): value
        case .integer(let value): NSNumber(value: value)
        case .unsignedInteger(let value): NSNumber(value: value)
        case .real(let value): NSNumber(value: value)
        case .boolean(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let nodes): nodes.map(\.object)
        case .dictionary(let nodes): nodes.mapValues(\.object)
        // Foundation has no object for it; `decode(as:)` refuses a node holding one first.
        case .uid(let bytes): bytes
        }
    }

    /// Whether the node holds a UID, which nothing but a settings file's own reader and writer
    /// can hold.
    var containsUID: Bool {
        switch self {
        case .uid: true
        case .array(let nodes): nodes.contains { $0.containsUID }
        case .dictionary(let nodes): nodes.values.contains { $0.containsUID }
        default: false
        }
    }
}

extension PropertyListNode {
    /// Whether the node holds a date with a fraction of a second, which an XML property list
    /// cannot hold (it writes dates to whole seconds).
    var containsInexactDate: Bool {
        switch self {
        case .date(let date):
            date.timeIntervalSinceReferenceDate.rounded(.towardZero) != date.timeIntervalSinceReferenceDate
        case .array(let nodes): nodes.contains { $0.containsInexactDate }
        case .dictionary(let nodes): nodes.values.contains { $0.containsInexactDate }
        default: false
        }
    }
}

/// An optional seen as `Any`, so its wrapped object can be taken out.
private protocol OptionalObject {
    var wrappedObject: Any? { get }
}

extension Optional: OptionalObject {
    var wrappedObject: Any? { self.map { $0 as Any } }
}

// MARK: - Codable values

extension PropertyListNode {
    /// The node for any `Encodable` value, scalars included, which a property list cannot hold at
    /// the top level: the value is encoded inside a one-key dictionary and taken out again.
    init(encoding value: some Encodable) throws {
        if let node = Self(scalar: value) {
            self = node
            return
        }
        let data: Data
        do {
            data = try PropertyListEncoder().encode(Wrapped(value: value))
        } catch {
            throw ValueStoreError(encoding: error, as: "property list")
        }
        guard case .dictionary(let wrapper)? = try? Self.parse(data), let node = wrapper[wrapperKey] else {
            throw ValueStoreError(.encodingFailed, reason: "\(type(of: value)) has no property-list form")
        }
        self = node
    }

    /// Decodes the node as `Value`; a node of another shape is `decodingFailed`.
    func decode<Value: Decodable>(as type: Value.Type) throws -> Value {
        if let value = scalar(as: Value.self) {
            return value
        }
        guard !containsUID else {
            throw ValueStoreError(
                .unsupportedFormat,
                reason:
                    "the value holds a UID (an object reference an NSKeyedArchiver writes), which no Codable value"
                    + " can hold; it is kept in the file as it is")
        }
        do {
            let data = try PropertyListSerialization.data(
                fromPropertyList: [wrapperKey: object], format: .binary, options: 0)
            return try PropertyListDecoder().decode(Unwrapped<Value>.self, from: data).value
        } catch let error as DecodingError {
            throw ValueStoreError(decoding: error, as: "property list").demotingCorruptionToDecoding()
        } catch {
            throw ValueStoreError(.decodingFailed, reason: "the value is not \(Value.self)", underlyingError: error)
        }
    }

    /// The node for the scalars settings hold most, without a round trip through an encoder;
    /// `nil` for any other type. Exact types only: a `Bool` is never taken for an integer.
    private init?<Value: Encodable>(scalar value: Value) {
        if Value.self == Bool.self, let value = value as? Bool {
            self = .boolean(value)
        } else if Value.self == Int.self, let value = value as? Int {
            self = .integer(Int64(value))
        } else if Value.self == Double.self, let value = value as? Double {
            self = .real(value)
        } else if Value.self == String.self, let value = value as? String {
            self = .string(value)
        } else {
            return nil
        }
    }

    /// The node as a scalar of exactly `Value`'s type when it holds one; `nil` for any other
    /// type, or a node of another kind, which the decoder then judges.
    private func scalar<Value>(as type: Value.Type) -> Value? {
        switch self {
        case .boolean(let value) where type == Bool.self: value as? Value
        case .integer(let value) where type == Int.self: Int(exactly: value) as? Value
        case .real(let value) where type == Double.self: value as? Value
        case .string(let value) where type == String.self: value as? Value
        default: nil
        }
    }

    /// Parses a property list; throws when the bytes are not one or hold other objects.
    static func parse(_ data: Data) throws -> PropertyListNode {
        let object = try PropertyListSerialization.propertyList(from: data, format: nil)
        guard let node = PropertyListNode(object: object) else {
            throw ValueStoreError(
                .corrupted, reason: "the property list holds objects that are not property-list values")
        }
        return node
    }
}

/// The one key a value is wrapped under, so scalars fit where a property list needs a container.
private let wrapperKey = "value"

/// A value to encode under ``wrapperKey``.
private struct Wrapped<Value: Encodable>: Encodable {
    var value: Value
}

/// A value to decode from under ``wrapperKey``.
private struct Unwrapped<Value: Decodable>: Decodable {
    var value: Value
}

extension ValueStoreError {
    /// A decoding failure of one key is never corruption of the file: the file parsed already.
    fileprivate func demotingCorruptionToDecoding() -> ValueStoreError {
        guard code == .corrupted else { return self }
        var error = self
        error.code = .decodingFailed
        return error
    }
}
