extension Codec {
    /// A codec whose every conversion throws `error`: a placeholder for a format that is not
    /// ready, or a way to test how a store reports a codec's failure.
    ///
    /// ```swift
    /// let unreadable = ValueStore<Void, Data>.inMemory(Data())
    ///     .coded(Codec<Settings, Data>.failing(MigrationError.unsupported))
    /// ```
    ///
    /// Through ``ValueStore/coded(_:)``, a ``ValueStoreError`` passes through unchanged; any
    /// other error becomes ``ValueStoreError/Code/decodingFailed`` on load and
    /// ``ValueStoreError/Code/encodingFailed`` on save, with `error` as its underlying error.
    ///
    /// - Parameter error: The error both conversions throw.
    /// - Returns: A codec that always throws.
    public static func failing(_ error: any Error) -> Self {
        Self(
            to: { _ in throw error },
            from: { _ in throw error }
        )
    }
}
