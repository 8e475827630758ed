extension SettingsFile {
    /// The store of one key, holding any `Codable` value.
    ///
    /// ```swift
    /// let fontSize = settings.store("fontSize", as: Int.self)
    /// try await fontSize.save(16)
    /// let size = try await fontSize.load()   // 16
    /// ```
    ///
    /// Make type-safe keys static constructors, so a key's name and type are written once:
    ///
    /// ```swift
    /// extension ValueStore<Void, String> {
    ///     static func theme(in settings: SettingsFile) -> Self { settings.store("theme", as: String.self) }
    /// }
    /// ```
    ///
    /// A load serves the decoded value from memory until the file changes: through this process,
    /// or through another process, which the file's watch reports (see ``ValueStore/changes()``).
    /// A save or remove joins the next group commit and returns once it is durable; an update
    /// waits for its turn among this process's updates of the key, runs its body with no lock
    /// held, then commits on its own under the file's locks if the file did not change meanwhile,
    /// or runs the body again.
    ///
    /// The key is compared byte for byte: `"caf\u{e9}"` and `"cafe\u{301}"` are two keys.
    ///
    /// - Parameters:
    ///   - key: The key in the file.
    ///   - type: The value's type; any `Codable` value, stored as its property-list form.
    /// - Returns: A store of that key.
    @inlinable
    public func store<Value: Codable & Sendable>(_ key: String, as type: Value.Type = Value.self) -> ValueStore<
        Void, Value
    > {
        let cache = Locked<(generation: UInt64, value: Value)?>(nil)
        let label = label(of: key)
        let key = PropertyListKey(key)
        return ValueStore(
            label: label,
            load: { _ in
                // While the file's directory is not watched: one `stat` first (SettingsFile+Watch).
                if self.freshness.needsCheck { await self.forgetEntriesIfTheFileChanged() }
                if let cached = cache.withLock({ $0 }), cached.generation == self.currentGeneration {
                    return cached.value
                }
                let (entries, generation) = try await self.entries()
                guard let node = entries[key] else {
                    throw ValueStoreError(.notFound, store: label)
                }
                let value = try Self.decode(node, as: Value.self, label: label)
                cache.withLock { $0 = (generation, value) }
                return value
            },
            save: { value, _ in
                try await self.write([(key, try Self.encode(value, label: label))])
                return value
            },
            remove: { _ in
                try await self.write([(key, nil)])
            },
            update: { _, body in
                try await self.transaction(turnOf: key) { entries in
                    var value = try entries[key].map { try Self.decode($0, as: Value.self, label: label) }
                    try await body(&value)
                    entries[key] = try value.map { try Self.encode($0, label: label) }
                    return value
                }
            },
            changeSignals: { _ in self.keySignals(for: key) }
        )
    }

    /// Signals after each change to `key`'s entry in the file, for ``ValueStore/changes()`` on
    /// key stores: a change to another key wakes nobody here.
    @usableFromInline
    func keySignals(for key: PropertyListKey) -> AsyncStream<Void> {
        startWatching()
        return keyBroadcaster(for: key).signals()
    }

    @usableFromInline
    static func decode<Value: Decodable>(_ node: PropertyListNode, as type: Value.Type, label: String) throws -> Value {
        do {
            return try node.decode(as: Value.self)
        } catch let error as ValueStoreError {
            throw error.naming(label)
        }
    }

    @usableFromInline
    static func encode(_ value: some Encodable, label: String) throws -> PropertyListNode {
        do {
            return try PropertyListNode(encoding: value)
        } catch let error as ValueStoreError {
            throw error.naming(label)
        }
    }
}
