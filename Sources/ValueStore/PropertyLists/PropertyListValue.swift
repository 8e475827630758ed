public import Foundation

/// A type UserDefaults stores natively: `Bool`, `Int` and the fixed-width integers (`Int8` to
/// `Int64`, `UInt` to `UInt64`), `Double`, `Float`, `String`, `Data`, `Date`, and arrays and
/// string-keyed dictionaries of them.
///
/// Only these types compile with ``ValueStore/userDefaults(_:suiteName:)``, so a value
/// UserDefaults cannot hold is a compile error, not a crash at run time. Store other `Codable`
/// values as `Data`:
///
/// ```swift
/// let launches = ValueStore<Void, Int>.userDefaults("launchCount")
/// let profile = ValueStore<Void, Data>.userDefaults("profile").coded(.json)
/// ```
///
/// Reading is strict: a stored value of another type is not this type. A stored `1` is not a
/// `Bool`, a stored `2` is not a `Double`, and a stored `300` is not an `Int8`.
public protocol PropertyListValue: Sendable {
    /// The value, if `object` (as UserDefaults returns it) holds exactly this type.
    ///
    /// ```swift
    /// Int(propertyListObject: 3 as Any)   // 3
    /// ```
    ///
    /// - Parameter object: An object UserDefaults returned.
    init?(propertyListObject object: Any)

    /// The object UserDefaults stores for the value.
    ///
    /// ```swift
    /// let object = 3.propertyListObject
    /// ```
    var propertyListObject: Any { get }
}

extension Bool: PropertyListValue {
    /// A Boolean, only from a stored Boolean.
    ///
    /// ```swift
    /// Bool(propertyListObject: true as Any)   // true
    /// ```
    public init?(propertyListObject object: Any) {
        guard let value = stored(object, { if case .boolean(let value) = $0 { value } else { nil } }) else {
            return nil
        }
        self = value
    }

    /// The Boolean itself.
    public var propertyListObject: Any { self }
}

extension Int: PropertyListValue {
    // Its initializer is every integer's: only from a stored integer that fits (see the
    // `FixedWidthInteger` extension below).

    /// The integer itself.
    public var propertyListObject: Any { self }
}

extension Double: PropertyListValue {
    /// A real number, only from a stored real number.
    ///
    /// ```swift
    /// Double(propertyListObject: 0.5 as Any)   // 0.5
    /// ```
    public init?(propertyListObject object: Any) {
        guard let value = stored(object, { if case .real(let value) = $0 { value } else { nil } }) else { return nil }
        self = value
    }

    /// The number itself.
    public var propertyListObject: Any { self }
}

extension Float: PropertyListValue {
    /// A real number, only from a stored real number.
    ///
    /// ```swift
    /// Float(propertyListObject: 0.5 as Any)   // 0.5
    /// ```
    public init?(propertyListObject object: Any) {
        guard case .real(let value)? = PropertyListNode(object: object) else { return nil }
        self = Float(value)
    }

    /// The number itself.
    public var propertyListObject: Any { self }
}

extension String: PropertyListValue {
    /// A string, only from a stored string.
    ///
    /// ```swift
    /// String(propertyListObject: "dark" as Any)   // "dark"
    /// ```
    public init?(propertyListObject object: Any) {
        guard let value = stored(object, { if case .string(let value) = $0 { value } else { nil } }) else { return nil }
        self = value
    }

    /// The string itself.
    public var propertyListObject: Any { self }
}

extension Data: PropertyListValue {
    /// Bytes, only from stored data.
    ///
    /// ```swift
    /// Data(propertyListObject: Data([1]) as Any)
    /// ```
    public init?(propertyListObject object: Any) {
        guard case .data(let value)? = PropertyListNode(object: object) else { return nil }
        self = value
    }

    /// The bytes themselves.
    public var propertyListObject: Any { self }
}

extension Date: PropertyListValue {
    /// A date, only from a stored date.
    ///
    /// ```swift
    /// Date(propertyListObject: Date.now as Any)
    /// ```
    public init?(propertyListObject object: Any) {
        guard case .date(let value)? = PropertyListNode(object: object) else { return nil }
        self = value
    }

    /// The date itself.
    public var propertyListObject: Any { self }
}

extension Array: PropertyListValue where Element: PropertyListValue {
    /// An array, only when every element holds exactly `Element`.
    ///
    /// ```swift
    /// [Int](propertyListObject: [1, 2] as Any)   // [1, 2]
    /// ```
    public init?(propertyListObject object: Any) {
        guard case .array(let nodes)? = PropertyListNode(object: object) else { return nil }
        var elements: [Element] = []
        elements.reserveCapacity(nodes.count)
        for node in nodes {
            guard let element = Element(propertyListObject: node.object) else { return nil }
            elements.append(element)
        }
        self = elements
    }

    /// The elements' objects.
    public var propertyListObject: Any { map(\.propertyListObject) }
}

extension Dictionary: PropertyListValue where Key == String, Value: PropertyListValue {
    /// A dictionary, only when every value holds exactly `Value`.
    ///
    /// ```swift
    /// [String: Int](propertyListObject: ["a": 1] as Any)   // ["a": 1]
    /// ```
    public init?(propertyListObject object: Any) {
        guard case .dictionary(let nodes)? = PropertyListNode(object: object) else { return nil }
        var values: [String: Value] = [:]
        for (key, node) in nodes {
            guard let value = Value(propertyListObject: node.object) else { return nil }
            values[key] = value
        }
        self = values
    }

    /// The values' objects.
    public var propertyListObject: Any { mapValues(\.propertyListObject) }
}

extension PropertyListValue where Self: FixedWidthInteger {
    /// An integer, only from a stored integer that fits: `300` is not an `Int8`, `-1` not a
    /// `UInt`.
    ///
    /// ```swift
    /// Int(propertyListObject: 3 as Any)   // 3
    /// Int8(propertyListObject: 3 as Any)   // 3
    /// ```
    public init?(propertyListObject object: Any) {
        if let value = exactly(object, Self.self) {
            self = value
            return
        }
        switch PropertyListNode(object: object) {
        case .integer(let value)?: self.init(exactly: value)
        case .unsignedInteger(let value)?: self.init(exactly: value)
        default: return nil
        }
    }

    /// The integer as a number UserDefaults stores: a signed 64-bit integer, or an unsigned one
    /// above `Int64.max`, which both Foundations read back as an unsigned integer.
    public var propertyListObject: Any {
        if let value = Int64(exactly: self) { NSNumber(value: value) } else { NSNumber(value: UInt64(self)) }
    }
}

extension Int8: PropertyListValue {}
extension Int16: PropertyListValue {}
extension Int32: PropertyListValue {}
extension Int64: PropertyListValue {}
extension UInt: PropertyListValue {}
extension UInt8: PropertyListValue {}
extension UInt16: PropertyListValue {}
extension UInt32: PropertyListValue {}
extension UInt64: PropertyListValue {}

/// The value `object` holds: exactly this type, or else what `read` takes from the stored node
/// (a stored value of another kind is none).
private func stored<Value>(_ object: Any, _ read: (PropertyListNode) -> Value?) -> Value? {
    exactly(object, Value.self) ?? PropertyListNode(object: object).flatMap(read)
}

/// Returns the value when `object` holds exactly `type`: a fast path that skips classifying
/// Foundation's objects, and never bridges (a `Bool` is never read as an `Int`).
private func exactly<Value>(_ object: Any, _ type: Value.Type) -> Value? {
    guard Swift.type(of: object) == type else { return nil }
    return object as? Value
}
