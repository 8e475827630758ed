import Foundation

/// A ``DurableFile`` whose bytes are sealed with a key: decrypted after reading and encrypted
/// before writing, in memory, so plaintext never reaches the disk, not even a temporary file.
struct EncryptedFile: Sendable {
    let file: DurableFile
    /// What the file's authenticated data binds it to: by default its name.
    let item: EncryptedFileFormat.Item
    /// The file's label, built once: every load names the store to the decryption, which
    /// reports its failures with it.
    let label: String
    /// The last file this store decrypted, so that loading it again unchanged skips the
    /// decryption; only for stores that hold their key for as long as they live.
    let memo: DecryptedFileMemo?

    /// The file at `url`, sealed for `identity` (by default the file's name).
    ///
    /// `remembersLastFile` keeps the last file's plaintext (see ``DecryptedFileMemo``). Only a
    /// store that holds its key for its whole life may: one whose key comes with each call, from
    /// a vault that locks or an environment, must not keep the key or the plaintext once the call
    /// ends.
    init(
        _ url: URL,
        identity: String?,
        durability: FileOptions.Durability,
        fileSystem: FileSystem,
        remembersLastFile: Bool = false
    ) {
        file = DurableFile(
            url, options: FileOptions(durability: durability, permissions: 0o600), fileSystem: fileSystem)
        item = EncryptedFileFormat.Item(identity ?? file.name)
        label = file.label
        memo = remembersLastFile ? DecryptedFileMemo() : nil
    }

    /// Decrypts `sealed`; `memo`, taken before `sealed` was read, may skip the decryption.
    func decrypt(
        _ sealed: Data, with keyring: EncryptionKeyring, memo: DecryptedFileMemo.Reading? = nil
    ) throws -> Data {
        try EncryptedFileFormat.open(sealed, with: keyring, item: item, store: label, memo: memo)
    }

    func encrypt(_ plaintext: Data, with keyring: EncryptionKeyring) throws -> Data {
        do {
            return try EncryptedFileFormat.seal(plaintext, with: keyring.current, item: item)
        } catch {
            throw ValueStoreError(.encodingFailed, store: label, reason: "encryption failed", underlyingError: error)
        }
    }

    /// The plaintext, or `nil` when there is no file; off the caller's executor.
    @concurrent func readDecrypted(with keyring: EncryptionKeyring) async throws -> Data? {
        let memo = memo?.reading()  // before the read: a remove after it forgets what this load finds
        return try file.read().map { try decrypt($0, with: keyring, memo: memo) }
    }

    /// Removes the file, and forgets the plaintext of the last one read.
    func remove() async throws {
        defer { memo?.forget() }
        try await file.remove()
    }

    /// Encrypts `plaintext` and saves it durably, taking the file's locks.
    @concurrent func save(_ plaintext: Data, with keyring: EncryptionKeyring) async throws {
        try await file.save(encrypt(plaintext, with: keyring))
    }

    /// Re-encrypts the file with the keyring's current key, holding the file's locks.
    @concurrent func reencrypt(with keyring: EncryptionKeyring) async throws -> Bool {
        // Through a symbolic link, which stays: the file it names is rewritten.
        let file = try self.file.linkedFile() ?? self.file
        // Nothing to rewrite: say so without creating the lock file. A file that disappears
        // after this check is reported under the lock.
        guard try file.exists() else {
            throw ValueStoreError(.notFound, store: label, reason: "there is no file to re-encrypt")
        }
        return try await file.exclusively(creatingDirectory: false) { directoryExists in
            guard directoryExists, let sealed = try file.read() else {
                throw ValueStoreError(.notFound, store: label, reason: "there is no file to re-encrypt")
            }
            return try reencrypt(sealed, in: file, with: keyring)
        }
    }

    /// Rewrites `file` with the keyring's current key if another key wrote it.
    /// The lock must be held.
    private func reencrypt(_ sealed: Data, in file: DurableFile, with keyring: EncryptionKeyring) throws -> Bool {
        if EncryptedFileFormat.keyID(of: sealed) == keyring.current.id {
            // Still authenticate, so a damaged file is reported rather than reported as current.
            _ = try decrypt(sealed, with: keyring)
            return false
        }
        try file.write(encrypt(decrypt(sealed, with: keyring), with: keyring))
        return true
    }
}
