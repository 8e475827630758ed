public import Foundation

extension ValueStore where Environment == Void, Value: Codable & Sendable {
    /// A store that keeps a `Codable` value in a property-list file, saved atomically and
    /// durably.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Settings>.plistFile(directory.appending(path: "settings.plist"))
    /// let readable = ValueStore<Void, Settings>.plistFile(url, format: .xml)
    /// ```
    ///
    /// The file is an ordinary property list that `plutil` and other tools can read; loads
    /// accept either format. Saves, updates and removes have the guarantees of
    /// ``file(_:options:)``.
    ///
    /// > Important: An empty, truncated or malformed file throws ``ValueStoreError/Code/corrupted``
    /// > and a property list of the wrong shape throws ``ValueStoreError/Code/decodingFailed``,
    /// > both naming the file. Neither is reported as absence, and the file is left untouched.
    /// > Property lists need a dictionary or an array at the top on some platforms: store a
    /// > struct, not a bare number or string.
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - format: `.binary` (the default: compact and fast) or `.xml` (readable as text).
    ///   - options: Durability and permissions; by default durable, `0644`.
    /// - Returns: A store of the decoded value.
    public static func plistFile(
        _ url: URL,
        format: PropertyListSerialization.PropertyListFormat = .binary,
        options: FileOptions = .default
    ) -> Self {
        ValueStore<Void, Data>.file(url, options: options)
            .coded(.propertyList(format: format))
    }
}
