extension ValueStore where Value: Sendable {
    /// A store that always loads `value` and ignores saves and removes: for previews and for
    /// values that are fixed in a configuration.
    ///
    /// ```swift
    /// let previewUser = ValueStore<Void, User>.constant(.preview)
    /// ```
    ///
    /// - Parameter value: The value every load returns.
    /// - Returns: A store whose value never changes; `save` returns `value`, since that is what
    ///   stays stored.
    @inlinable
    public static func constant(_ value: Value) -> Self {
        Self(
            label: "constant store",
            load: { _ in value },
            save: { _, _ in value },
            remove: { _ in }
        )
    }
}
