public import Foundation

extension ValueStore where Environment == Void, Value: Codable & Sendable {
    /// A store that keeps a `Codable` value in a JSON file, saved atomically and durably.
    ///
    /// ```swift
    /// let settings = ValueStore<Void, Settings>.jsonFile(directory.appending(path: "settings.json"))
    /// let launches = try await ValueStore<Void, Int>.jsonFile(countURL).default(0).update { $0 += 1 }
    /// ```
    ///
    /// The file is ordinary JSON that other tools can read. Saves, updates and removes have the
    /// guarantees of ``file(_:options:)``: atomic, durable, and atomic `update` across tasks and
    /// processes, also through ``default(_:)`` and the other pass-through combinators.
    ///
    /// > Important: An empty, truncated or malformed file throws ``ValueStoreError/Code/corrupted``
    /// > and well-formed JSON of the wrong shape throws ``ValueStoreError/Code/decodingFailed``,
    /// > both naming the file and saying what was wrong. Neither is ever reported as absence,
    /// > so ``default(_:)`` does not hide it, and the file is left untouched; see
    /// > ``FileQuarantine`` to move it aside.
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - encoder: Encodes saved values; configure it before passing it.
    ///   - decoder: Decodes loaded values; configure it before passing it.
    ///   - options: Durability and permissions; by default durable, `0644`.
    /// - Returns: A store of the decoded value.
    public static func jsonFile(
        _ url: URL,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder(),
        options: FileOptions = .default
    ) -> Self {
        jsonFile(url, encoder: encoder, decoder: decoder, options: options, fileSystem: .live)
    }

    /// ``jsonFile(_:encoder:decoder:options:)`` through `fileSystem`.
    static func jsonFile(
        _ url: URL, encoder: JSONEncoder, decoder: JSONDecoder, options: FileOptions, fileSystem: FileSystem
    ) -> Self {
        let file = DurableFile(url, options: options, fileSystem: fileSystem)
        let codec = Codec<Value, Data>.json(encoder: encoder, decoder: decoder)
        var store = ValueStore<Void, Data>.file(file).coded(codec)
        let label = store.label
        store.save = { value, _ in
            // Encoded only if this value is the one its group commit writes: of 200 saves that
            // arrive together, one or two are encoded, not 200. The commit's leader encodes
            // and writes on the I/O threads (see CommitQueue).
            try await file.save(encoding: { try codec.encode(value, store: label) })
            return value
        }
        return store
    }
}
