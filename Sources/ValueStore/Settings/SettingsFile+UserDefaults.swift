extension SettingsFile {
    /// Moves keys from UserDefaults into this file, in one durable commit.
    ///
    /// ```swift
    /// try await settings.importUserDefaults(suiteName: nil, keys: ["theme", "fontSize", "likesIceCream"])
    /// ```
    ///
    /// - Each value keeps its property-list type: a `Bool` stays a `Bool` and a number its kind,
    ///   so no list of Boolean keys is needed.
    /// - Keys already in the file are skipped, and so are keys UserDefaults does not store
    ///   (registered defaults are not stored values), so importing twice changes nothing.
    /// - The imported keys are removed from UserDefaults only after the commit is durable, and
    ///   only if UserDefaults still holds what was imported; a failed commit leaves UserDefaults
    ///   as it was. A key whose value the file already holds is removed from UserDefaults too, so
    ///   an import interrupted after its commit finishes on the next call.
    ///
    /// - Parameters:
    ///   - suiteName: The suite to import from; `nil` for `UserDefaults.standard`.
    ///   - keys: The keys to import.
    /// - Returns: The keys imported, in the order given.
    /// - Throws: The commit's error (``ValueStoreError/Code/corrupted`` for a damaged file, which
    ///   is left as it is), or an error removing the imported keys from UserDefaults.
    @discardableResult
    public func importUserDefaults(suiteName: String?, keys: [String]) async throws -> [String] {
        var found: [(key: String, node: PropertyListNode)] = []
        for key in keys {
            if let node = try UserDefaultsKey(key, suiteName: suiteName).storedNode() {
                found.append((key, node))
            }
        }
        guard !found.isEmpty else { return [] }
        let (imported, inFile) = try await transaction { entries in
            var imported: [String] = []
            for (key, node) in found where entries[PropertyListKey(key)] == nil {
                entries[PropertyListKey(key)] = node
                imported.append(key)
            }
            return (imported, entries)
        }
        // Only what the file now holds, unchanged in UserDefaults since it was read, leaves
        // UserDefaults: a value written meanwhile stays, and an import cut short by a failure
        // here finishes on the next call.
        for (key, node) in found where inFile[PropertyListKey(key)] == node {
            let defaults = UserDefaultsKey(key, suiteName: suiteName)
            if try defaults.storedNode() == node {
                try await BlockingIO.run { try await defaults.removeValue() }
            }
        }
        return imported
    }
}
