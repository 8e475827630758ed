public import Foundation

extension Codec where Input == String, Output == Data {
    /// Stores strings as UTF-8 bytes.
    ///
    /// ```swift
    /// let note = ValueStore<Void, Data>.inMemory().coded(Codec<String, Data>.utf8)
    /// ```
    ///
    /// Bytes that are not valid UTF-8 fail with ``ValueStoreError/Code/corrupted``.
    public static var utf8: Self {
        Self(
            to: { string in Data(string.utf8) },
            from: { data in
                guard let string = String(data: data, encoding: .utf8) else {
                    throw ValueStoreError(.corrupted, reason: "the data is not valid UTF-8")
                }
                return string
            }
        )
    }
}
