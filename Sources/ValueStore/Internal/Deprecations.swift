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

extension ValueStore where Environment == Void, Value: PropertyListValue {
    /// A store of one UserDefaults key.
    ///
    /// The original store cast whatever was stored and reported a mismatch as absence. This one
    /// is the strict ``userDefaults(_:suiteName:)`` store: a value of another type is
    /// ``ValueStoreError/Code/decodingFailed``, and only property-list types compile.
    @available(*, deprecated, message: "use userDefaults(_:suiteName:), which reports a wrong type instead of absence")
    public static func unsafeRawUserDefaults(_ key: String, userDefaults: sending UserDefaults = .standard) -> Self {
        Self.userDefaults(UserDefaultsKey(key, defaults: userDefaults))
    }
}

extension ValueStore where Environment == Void, Value: Codable & Sendable {
    /// A store of one UserDefaults key holding the value as JSON data.
    ///
    /// The strict ``userDefaults(_:suiteName:)`` store of `Data`, coded as JSON: undecodable data
    /// is ``ValueStoreError/Code/corrupted`` or ``ValueStoreError/Code/decodingFailed``, never
    /// absence.
    @available(
        *, deprecated,
        message:
            "use ValueStore<Void, Data>.userDefaults(_:suiteName:).coded(.json), which reports bad data instead of absence"
    )
    public static func unsafeJSONUserDefaults(_ key: String, userDefaults: sending UserDefaults = .standard) -> Self {
        ValueStore<Void, Data>.userDefaults(UserDefaultsKey(key, defaults: userDefaults)).coded(.json)
    }
}
