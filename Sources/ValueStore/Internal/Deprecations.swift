// Names from the library this one grew from, kept so that code migrating from it compiles with
// a fix-it to the new name.

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
