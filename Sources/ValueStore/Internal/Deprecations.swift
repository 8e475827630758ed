// Names from the library this one grew from (swift-valuestore 0.1), kept so that code migrating
// from it compiles, with a fix-it or a message that points to the new spelling. The migration
// guide, Documentation/MigratingFromValueStore0.md, maps every name.

public import Foundation

extension ValueStore where Value: Sendable {
    /// A store that always loads `value`.
    @available(*, deprecated, renamed: "constant(_:)")
    public static func const(_ value: Value) -> Self {
        constant(value)
    }
}

extension ValueStore {
    /// A store whose every operation throws `error`.
    @available(*, deprecated, renamed: "failing(_:)")
    public static func error(_ error: any Error) -> Self {
        failing(error)
    }
}

extension ValueStoreError {
    /// No value is stored.
    @available(*, deprecated, renamed: "notFound")
    public static var noData: Self { notFound }
}

/// A two-way conversion; every ``Codec`` is one, and a codec may also throw.
@available(*, deprecated, renamed: "Codec")
public typealias Conversion<Input, Output> = Codec<Input, Output>

extension ValueStore {
    /// The same store over another value type, converted by `conversion`.
    @available(*, deprecated, renamed: "coded(_:)")
    public func map<NewValue>(_ conversion: Codec<NewValue, Value>) -> ValueStore<Environment, NewValue> {
        coded(conversion)
    }

    /// The same store over another value type; the conversion to the stored type comes first.
    ///
    /// - Parameters:
    ///   - transformInput: Converts a new value to the stored type.
    ///   - transformOutput: Converts a stored value to the new type.
    /// - Returns: The store ``map(load:save:)-((Value)->NewValue,_)`` returns.
    @available(
        *, deprecated,
        message: "use map(load:save:), which names its conversions: map(load: transformOutput, save: transformInput)"
    )
    public func map<NewValue>(
        _ transformInput: @escaping @Sendable (_ value: NewValue) throws -> Value,
        _ transformOutput: @escaping @Sendable (_ stored: Value) throws -> NewValue
    ) -> ValueStore<Environment, NewValue> {
        map(load: transformOutput, save: transformInput)
    }

    /// The same store over another value type, with asynchronous conversions.
    ///
    /// - Parameters:
    ///   - preprocess: Converts a new value to the stored type.
    ///   - postprocess: Converts a stored value to the new type.
    /// - Returns: The store the asynchronous ``map(load:save:)-(,_)`` returns.
    @available(
        *, deprecated,
        message: "use map(load:save:) with async conversions: map(load: postprocess, save: preprocess)"
    )
    public func process<NewValue>(
        preprocess: nonisolated(nonsending) @escaping @Sendable (_ value: NewValue) async throws -> Value,
        postprocess: nonisolated(nonsending) @escaping @Sendable (_ stored: Value) async throws -> NewValue
    ) -> ValueStore<Environment, NewValue> {
        map(load: postprocess, save: preprocess)
    }

    /// The same store over a `RawRepresentable` type whose raw values are stored.
    ///
    /// - Parameter type: The type to store.
    /// - Returns: The store `coded(.rawRepresentable)` returns.
    @available(*, deprecated, message: "use coded(.rawRepresentable)")
    public func representing<NewValue>(
        by type: NewValue.Type
    ) -> ValueStore<Environment, NewValue> where NewValue: RawRepresentable & Sendable, NewValue.RawValue == Value {
        coded(.rawRepresentable)
    }
}

extension Codec {
    /// A codec whose every conversion throws `error`.
    @available(*, deprecated, renamed: "failing(_:)")
    public static func error(_ error: any Error) -> Self {
        failing(error)
    }
}

extension Codec where Input: RawRepresentable & Sendable, Output == Input.RawValue {
    /// Stores a `RawRepresentable` value as its raw value.
    @available(*, deprecated, renamed: "rawRepresentable")
    public static var representing: Self { rawRepresentable }
}

extension Codec where Input: Codable & Sendable, Output == Data {
    /// Encodes values as JSON; the decoder comes first.
    ///
    /// - Parameters:
    ///   - decoder: Decodes values.
    ///   - encoder: Encodes values.
    /// - Returns: The codec ``json(encoder:decoder:)`` returns.
    @available(*, deprecated, message: "use json(encoder:decoder:), which takes the encoder first")
    public static func jsonCodec(
        _ decoder: JSONDecoder = JSONDecoder(),
        _ encoder: JSONEncoder = JSONEncoder()
    ) -> Self {
        json(encoder: encoder, decoder: decoder)
    }
}

extension ValueStore where Value: PropertyListValue {
    /// A store of one UserDefaults key, for any environment, which it ignores.
    ///
    /// The original store cast whatever was stored and reported a mismatch as absence. This one
    /// is the strict ``userDefaults(_:suiteName:)`` store: a value of another type is
    /// ``ValueStoreError/Code/decodingFailed``, and only property-list types compile.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - userDefaults: The defaults that hold the key.
    /// - Returns: The strict store, with `require(Environment.self)` for another environment.
    @available(
        *, deprecated,
        message:
            "use userDefaults(_:suiteName:), which reports a wrong type instead of absence, and require(_:) for an environment"
    )
    public static func unsafeRawUserDefaults(_ key: String, userDefaults: sending UserDefaults = .standard) -> Self {
        ValueStore<Void, Value>.userDefaults(UserDefaultsKey(key, defaults: userDefaults)).require(Environment.self)
    }
}

extension ValueStore where Value: Codable & Sendable {
    /// A store of one UserDefaults key holding the value as JSON data, for any environment, which
    /// it ignores.
    ///
    /// The strict ``userDefaults(_:suiteName:)`` store of `Data`, coded as JSON: undecodable data
    /// is ``ValueStoreError/Code/corrupted`` or ``ValueStoreError/Code/decodingFailed``, never
    /// absence.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - userDefaults: The defaults that hold the key.
    /// - Returns: The strict store of JSON data, with `require(Environment.self)` for another
    ///   environment.
    @available(
        *, deprecated,
        message:
            "use ValueStore<Void, Data>.userDefaults(_:suiteName:).coded(.json), which reports bad data instead of absence"
    )
    public static func unsafeJSONUserDefaults(_ key: String, userDefaults: sending UserDefaults = .standard) -> Self {
        ValueStore<Void, Data>.userDefaults(UserDefaultsKey(key, defaults: userDefaults)).coded(.json)
            .require(Environment.self)
    }
}

// MARK: - Names that are gone, each with a message that names what to write instead

/// The original library's error for a failed conversion.
@available(
    *, unavailable,
    message:
        "throw and catch ValueStoreError: its code is decodingFailed, encodingFailed or corrupted, and underlyingError holds the cause"
)
public enum CodecError: Error {
    /// A value could not be converted.
    case encoding
}

extension ValueStoreError {
    /// The original library's error for a failed conversion, wrapping the cause.
    ///
    /// - Parameter error: The cause.
    /// - Returns: Never: the name is unavailable.
    @available(
        *, unavailable,
        message: "use ValueStoreError(.decodingFailed or .encodingFailed, underlyingError: error)"
    )
    public static func encoding(_ error: any Error) -> Self {
        Self(.decodingFailed, underlyingError: error)
    }
}

/// The original library's helper that unwraps an optional or throws.
///
/// - Parameters:
///   - value: The optional.
///   - error: What to throw when it is `nil`.
/// - Returns: The unwrapped value.
/// - Throws: `error` when `value` is `nil`.
@available(*, unavailable, message: "use guard let value else { throw error }")
public func isPresent<Value>(_ value: Value?, or error: any Error) throws -> Value {
    guard let value else { throw error }
    return value
}

extension ValueStore where Environment == Void, Value == Data {
    /// The original file store, which wrote through a `FileManager`.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - fileManager: The file manager the original store used.
    /// - Returns: The store ``file(_:options:)`` returns.
    @available(
        *, unavailable,
        message: "use file(_:options:) without fileManager: it writes atomically and durably, through no FileManager"
    )
    public static func file(_ url: URL, fileManager: FileManager) -> Self {
        file(url)
    }
}

extension ValueStore where Environment == Void, Value: Codable & Sendable {
    /// The original JSON file store, which wrote through a `FileManager`.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - fileManager: The file manager the original store used.
    ///   - encoder: Encodes values.
    ///   - decoder: Decodes values.
    /// - Returns: The store ``jsonFile(_:encoder:decoder:options:)`` returns.
    @available(
        *, unavailable,
        message:
            "use jsonFile(_:encoder:decoder:options:) without fileManager: it writes atomically and durably, through no FileManager"
    )
    public static func jsonFile(
        _ url: URL,
        fileManager: FileManager,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder()
    ) -> Self {
        jsonFile(url, encoder: encoder, decoder: decoder)
    }
}

// The original library's `PropertyListValue` took Foundation's classes too. Their conformances
// are unavailable: the strict store reads and writes Swift's own types.

extension PropertyListValue where Self: NSObject {
    /// Unavailable: Foundation's classes are not property-list values here.
    ///
    /// - Parameter object: An object UserDefaults returned.
    @available(*, unavailable, message: "store Data, String, a number type, Date, [Element] or [String: Value]")
    public init?(propertyListObject object: Any) {
        return nil
    }

    /// Unavailable: Foundation's classes are not property-list values here.
    @available(*, unavailable, message: "store Data, String, a number type, Date, [Element] or [String: Value]")
    public var propertyListObject: Any { self }
}

@available(*, unavailable, message: "store Data: the strict UserDefaults store takes Swift's types")
extension NSData: PropertyListValue {}

@available(*, unavailable, message: "store String: the strict UserDefaults store takes Swift's types")
extension NSString: PropertyListValue {}

@available(*, unavailable, message: "store Bool, Int, another integer type, Double or Float")
extension NSNumber: PropertyListValue {}

@available(*, unavailable, message: "store Date: the strict UserDefaults store takes Swift's types")
extension NSDate: PropertyListValue {}

@available(*, unavailable, message: "store an array [Element] of property-list values")
extension NSArray: PropertyListValue {}

@available(*, unavailable, message: "store a dictionary [String: Value] of property-list values")
extension NSDictionary: PropertyListValue {}
