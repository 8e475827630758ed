/// A two-way conversion between the values users save and the values a store keeps.
///
/// `to` turns what the user saves (`Input`) into what the base store keeps (`Output`), and `from`
/// turns it back. ``ValueStore/coded(_:)`` applies a codec to a store:
///
/// ```swift
/// let settings: ValueStore<Void, Settings> = dataStore.coded(Codec<Settings, Data>.json)
/// ```
///
/// A codec should round-trip: `from(to(value))` equals `value`. The ready codecs (``json``,
/// ``propertyList``, ``utf8``, ``rawRepresentable``) do, and report bad input as a
/// ``ValueStoreError``: ``ValueStoreError/Code/corrupted`` for malformed bytes and
/// ``ValueStoreError/Code/decodingFailed`` for well-formed data of the wrong shape.
public struct Codec<Input, Output>: Sendable {
    /// Converts a value to its stored form.
    public var to: @Sendable (_ input: Input) throws -> Output
    /// Converts a stored form back to a value.
    public var from: @Sendable (_ output: Output) throws -> Input

    /// Creates a codec from its two conversions.
    ///
    /// ```swift
    /// let celsius = Codec<Temperature, Double>(
    ///     to: { $0.celsius },
    ///     from: { Temperature(celsius: $0) }
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - to: Converts a value to its stored form.
    ///   - from: Converts a stored form back to a value; throws when it cannot.
    public init(
        to: @escaping @Sendable (_ input: Input) throws -> Output,
        from: @escaping @Sendable (_ output: Output) throws -> Input
    ) {
        self.to = to
        self.from = from
    }
}
