/// Changes to several keys of a ``SettingsFile``, committed together by
/// ``SettingsFile/batch(_:)``.
///
/// ```swift
/// try await settings.batch { batch in
///     try batch.set("dark", for: "theme")
///     batch.remove("legacyFlag")
/// }
/// ```
public struct SettingsBatch: Sendable {
    var changes: [SettingsFile.Change] = []

    init() {}

    /// Sets `key` to `value` when the batch commits.
    ///
    /// ```swift
    /// try batch.set(16, for: "fontSize")
    /// ```
    ///
    /// - Parameters:
    ///   - value: Any `Encodable` value; it is encoded now, so a failure throws here.
    ///   - key: The key to set.
    /// - Throws: ``ValueStoreError/Code/encodingFailed`` when the value has no property-list form.
    public mutating func set(_ value: some Encodable, for key: String) throws {
        changes.append((PropertyListKey(key), try PropertyListNode(encoding: value)))
    }

    /// Removes `key` when the batch commits; removing a missing key is fine.
    ///
    /// ```swift
    /// batch.remove("legacyFlag")
    /// ```
    ///
    /// - Parameter key: The key to remove.
    public mutating func remove(_ key: String) {
        changes.append((PropertyListKey(key), nil))
    }
}

extension SettingsFile {
    /// Changes several keys in one durable commit: all of them or none.
    ///
    /// ```swift
    /// try await settings.batch { batch in
    ///     try batch.set("dark", for: "theme")
    ///     try batch.set(16, for: "fontSize")
    ///     batch.remove("legacyFlag")
    /// }
    /// ```
    ///
    /// `body` collects the changes; if it throws, nothing is written. The changes then join the
    /// next group commit, and this returns once it is durable.
    ///
    /// - Parameter body: Sets and removes keys on the batch.
    /// - Throws: `body`'s error, or the commit's (``ValueStoreError/Code/corrupted`` for a damaged
    ///   file, which is left as it is).
    public func batch(_ body: (_ batch: inout SettingsBatch) throws -> Void) async throws {
        var batch = SettingsBatch()
        try body(&batch)
        try await write(batch.changes)
    }
}
