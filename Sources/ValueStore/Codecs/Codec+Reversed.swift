extension Codec {
    /// The same codec the other way round: `to` becomes `from`, and `from` becomes `to`.
    ///
    /// ```swift
    /// // A store of strings (a keychain item, say) that should hold JSON documents:
    /// let settings = keychainItem
    ///     .coded(Codec<String, Data>.utf8.reversed())
    ///     .coded(Codec<Settings, Data>.json)
    /// ```
    ///
    /// Each conversion keeps its errors: `Codec<String, Data>.utf8.reversed()` decodes a string
    /// to bytes without failing, and fails with ``ValueStoreError/Code/corrupted`` when bytes
    /// to be saved are not valid UTF-8.
    ///
    /// - Returns: A codec from this codec's output to its input.
    public func reversed() -> Codec<Output, Input> {
        Codec<Output, Input>(to: from, from: to)
    }
}
