public import Foundation

extension ValueStore where Environment == EncryptionKeyring, Value: Codable & Sendable {
    /// A store that keeps a `Codable` value in an encrypted file, with its keys supplied per call.
    ///
    /// ```swift
    /// let token = ValueStore<EncryptionKeyring, String>.encryptedFile(url)
    /// try await token.save("s3cr3t", EncryptionKeyring(current: key))
    /// ```
    ///
    /// The value is encoded as JSON, then sealed with AES-256-GCM under the keyring's current key
    /// and a fresh random nonce; loads accept any key of the keyring, chosen by the key id in the
    /// file's header. The header and the item's identity are authenticated too, so a changed
    /// byte or a file copied from another item fails. Writes go through the file stores' atomic,
    /// durable write, with the same cross-process locking, and plaintext never touches the disk.
    /// Files are created `0600`. See Documentation/EncryptedFiles.md for the format and the
    /// threat model.
    ///
    /// > Important: A wrong key, tampering, truncation, a copied file and an unknown format each
    /// > throw their own ``ValueStoreError`` (``ValueStoreError/Code/wrongKey``,
    /// > ``ValueStoreError/Code/authenticationFailed``, ``ValueStoreError/Code/corrupted``,
    /// > ``ValueStoreError/Code/itemMismatch``, ``ValueStoreError/Code/unsupportedFormat``),
    /// > never ``ValueStoreError/Code/notFound``, and the file is left as it was.
    ///
    /// Errors never quote the decrypted data: a value of the wrong shape throws
    /// ``ValueStoreError/Code/decodingFailed`` with the coding path and the types involved, and
    /// its ``ValueStoreError/underlyingError`` is a redacted stand-in for the decoder's error.
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - identity: What the file is bound to; by default its name, so moving the whole directory
    ///     still works but a file copied over another item's fails to open.
    ///   - durability: `.durable` (the default) or `.relaxed`.
    /// - Returns: A store whose environment is the keyring to use.
    public static func encryptedFile(
        _ url: URL,
        identity: String? = nil,
        durability: FileOptions.Durability = .durable
    ) -> ValueStore<EncryptionKeyring, Value> {
        encryptedFile(url, identity: identity, durability: durability, remembersLastFile: false)
    }

    /// The keyring-taking store, remembering the last file it decrypted when the store that
    /// wraps it holds its key for as long as it lives (see ``DecryptedFileMemo``).
    static func encryptedFile(
        _ url: URL,
        identity: String?,
        durability: FileOptions.Durability,
        remembersLastFile: Bool
    ) -> ValueStore<EncryptionKeyring, Value> {
        ValueStore<EncryptionKeyring, Data>
            .encryptedFile(
                url, identity: identity, durability: durability, fileSystem: .live,
                remembersLastFile: remembersLastFile
            )
            .coded(.redactedJSON)
    }
}

extension ValueStore where Environment == EncryptionKeyring, Value == Data {
    /// The encrypted store of raw plaintext bytes, over the given file system.
    static func encryptedFile(
        _ url: URL,
        identity: String?,
        durability: FileOptions.Durability,
        fileSystem: FileSystem,
        remembersLastFile: Bool = false
    ) -> Self {
        let encrypted = EncryptedFile(
            url, identity: identity, durability: durability, fileSystem: fileSystem,
            remembersLastFile: remembersLastFile)
        let file = encrypted.file
        return Self(
            label: encrypted.label,
            // Each operation runs on the I/O threads (see BlockingIO), decryption included, but
            // a load, a brief read, which runs on the pool while the disk is quick.
            load: { keyring in
                guard
                    let plaintext = try await BlockingIO.runBrief({ try await encrypted.readDecrypted(with: keyring) })
                else {
                    throw ValueStoreError(.notFound, store: encrypted.label)
                }
                return plaintext
            },
            save: { plaintext, keyring in
                try await BlockingIO.run { try await encrypted.save(plaintext, with: keyring) }
                return plaintext
            },
            remove: { _ in try await BlockingIO.run { try await encrypted.remove() } },
            update: { keyring, body in
                try await BlockingIO.run {
                    try await file.update(
                        body,
                        decoding: { try encrypted.decrypt($0, with: keyring) },
                        encoding: { try encrypted.encrypt($0, with: keyring) }
                    )
                }
            },
            changeSignals: { _ in file.changeSignals() }
        ).holdingSecrets(true)
    }
}

extension ValueStore where Environment == EncryptionKey, Value: Codable & Sendable {
    /// A store that keeps a `Codable` value in an encrypted file, with its key supplied per call,
    /// for example from a session that unlocked it.
    ///
    /// ```swift
    /// let token = ValueStore<EncryptionKey, String>.encryptedFile(url)
    /// let value = try await token.load(session.key)
    /// ```
    ///
    /// See ``encryptedFile(_:identity:durability:)->ValueStore<EncryptionKeyring,Value>``, with a
    /// keyring, for the guarantees.
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - identity: What the file is bound to; by default its name.
    ///   - durability: `.durable` (the default) or `.relaxed`.
    /// - Returns: A store whose environment is the key to use.
    public static func encryptedFile(
        _ url: URL,
        identity: String? = nil,
        durability: FileOptions.Durability = .durable
    ) -> ValueStore<EncryptionKey, Value> {
        ValueStore<EncryptionKeyring, Value>
            .encryptedFile(url, identity: identity, durability: durability)
            .pullback { EncryptionKeyring(current: $0) }
    }
}

extension ValueStore where Environment == Void, Value: Codable & Sendable {
    /// A store that keeps a `Codable` value in a file encrypted with `key`.
    ///
    /// ```swift
    /// let key = try await EncryptionKey.loadOrCreate(at: keysDirectory.appending(path: "vault.key"))
    /// let token = ValueStore<Void, String>.encryptedFile(dataDirectory.appending(path: "token.enc"), key: key)
    /// ```
    ///
    /// It is the key-taking store with the key provided:
    /// `ValueStore<EncryptionKey, Value>.encryptedFile(url).provide(key)`.
    ///
    /// - Parameters:
    ///   - url: The file's location. Keep the key elsewhere.
    ///   - key: The key that encrypts and decrypts the file.
    ///   - identity: What the file is bound to; by default its name.
    ///   - durability: `.durable` (the default) or `.relaxed`.
    /// - Returns: A store of the decrypted value.
    public static func encryptedFile(
        _ url: URL,
        key: EncryptionKey,
        identity: String? = nil,
        durability: FileOptions.Durability = .durable
    ) -> Self {
        encryptedFile(url, keyring: EncryptionKeyring(current: key), identity: identity, durability: durability)
    }

    /// A store that keeps a `Codable` value in an encrypted file, saving with the keyring's
    /// current key and reading with any of its keys: the store to use during a key rotation.
    ///
    /// ```swift
    /// let token = ValueStore<Void, String>.encryptedFile(url, keyring: EncryptionKeyring(current: newKey, previous: [oldKey]))
    /// ```
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - keyring: The keys to use.
    ///   - identity: What the file is bound to; by default its name.
    ///   - durability: `.durable` (the default) or `.relaxed`.
    /// - Returns: A store of the decrypted value.
    public static func encryptedFile(
        _ url: URL,
        keyring: EncryptionKeyring,
        identity: String? = nil,
        durability: FileOptions.Durability = .durable
    ) -> Self {
        ValueStore<EncryptionKeyring, Value>
            .encryptedFile(url, identity: identity, durability: durability, remembersLastFile: true)
            .provide(keyring)
    }

    /// A store that keeps a `Codable` value in an encrypted file whose keys come from a
    /// ``KeyVault``: it works while the vault is unlocked and throws
    /// ``ValueStoreError/Code/locked`` while it is locked.
    ///
    /// ```swift
    /// let vault = KeyVault()
    /// let token = ValueStore<Void, String>.encryptedFile(url, vault: vault)
    /// ```
    ///
    /// > Important: While the vault is locked every operation throws
    /// > ``ValueStoreError/Code/locked``, never absence, so ``default(_:)`` and ``optional()`` do
    /// > not stand in for the secret. Removing needs the vault unlocked too.
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - vault: Where the keys come from.
    ///   - identity: What the file is bound to; by default its name.
    ///   - durability: `.durable` (the default) or `.relaxed`.
    /// - Returns: A store of the decrypted value.
    public static func encryptedFile(
        _ url: URL,
        vault: KeyVault,
        identity: String? = nil,
        durability: FileOptions.Durability = .durable
    ) -> Self {
        let store = ValueStore<EncryptionKeyring, Value>.encryptedFile(url, identity: identity, durability: durability)
        let label = store.label
        var unlocked = store.pullback(throwing: { (_: Void) in try vault.keyring(for: label) })
        // The file's signals need no key: follow the file even while the vault is locked.
        unlocked.changeSignals = { _ in DurableFile(url, options: .default, fileSystem: .live).changeSignals() }
        return unlocked
    }
}

extension EncryptionKeyring {
    /// Rewrites an encrypted file with the current key if one of the previous keys wrote it: the
    /// second half of a key rotation.
    ///
    /// ```swift
    /// let keyring = EncryptionKeyring(current: newKey, previous: [oldKey])
    /// let rewritten = try await keyring.reencryptFile(at: url)   // true: oldKey had written it
    /// ```
    ///
    /// The file is decrypted and re-encrypted in memory under a fresh nonce and written
    /// atomically, under the same locks as a save. Once every file is rewritten, the previous key
    /// can be dropped.
    ///
    /// - Parameters:
    ///   - url: The encrypted file.
    ///   - identity: The identity the file was written with; by default its name.
    ///   - durability: `.durable` (the default) or `.relaxed`.
    /// - Returns: `true` if the file was rewritten, `false` if the current key had written it.
    /// - Throws: ``ValueStoreError/notFound`` when there is no file (nothing is created, not even
    ///   a lock file), or the error opening it gives; the file is then left as it was.
    @discardableResult
    public func reencryptFile(
        at url: URL,
        identity: String? = nil,
        durability: FileOptions.Durability = .durable
    ) async throws -> Bool {
        let encrypted = EncryptedFile(url, identity: identity, durability: durability, fileSystem: .live)
        return try await BlockingIO.run { try await encrypted.reencrypt(with: self) }
    }
}
