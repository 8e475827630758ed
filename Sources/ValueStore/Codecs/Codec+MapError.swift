extension Codec {
    /// The same codec, replacing the errors its conversions throw.
    ///
    /// ```swift
    /// let strict = Codec<Settings, Data>.json.mapError { error in
    ///     SettingsError.unreadable(error)
    /// }
    /// ```
    ///
    /// ``ValueStore/coded(_:)`` passes a ``ValueStoreError`` through unchanged and wraps any
    /// other error in ``ValueStoreError/Code/decodingFailed`` or
    /// ``ValueStoreError/Code/encodingFailed``, keeping it as the underlying error. Return a
    /// ``ValueStoreError`` from `transform` to choose the code a store reports.
    ///
    /// - Parameter transform: Returns the error to throw instead; it sees the errors of both
    ///   conversions.
    /// - Returns: A codec that converts like this one and throws transformed errors.
    public func mapError(_ transform: @escaping @Sendable (_ error: any Error) -> any Error) -> Self {
        let to = to
        let from = from
        return Self(
            to: { input in
                do {
                    return try to(input)
                } catch {
                    throw transform(error)
                }
            },
            from: { output in
                do {
                    return try from(output)
                } catch {
                    throw transform(error)
                }
            }
        )
    }
}
