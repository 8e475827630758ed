extension Codec where Input: RawRepresentable & Sendable, Output == Input.RawValue {
    /// Stores a `RawRepresentable` value, such as a string enum, as its raw value.
    ///
    /// ```swift
    /// enum Theme: String { case light, dark }
    /// let theme = ValueStore<Void, String>.inMemory().coded(Codec<Theme, String>.rawRepresentable)
    /// ```
    ///
    /// A raw value with no matching value fails with ``ValueStoreError/Code/decodingFailed``.
    public static var rawRepresentable: Self {
        Self(
            to: { value in value.rawValue },
            from: { rawValue in
                guard let value = Input(rawValue: rawValue) else {
                    throw ValueStoreError(
                        .decodingFailed,
                        reason: "\(rawValue) is not a raw value of \(Input.self)"
                    )
                }
                return value
            }
        )
    }
}
