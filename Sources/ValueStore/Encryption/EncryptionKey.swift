public import Foundation

/// A 256-bit key for encrypted file stores.
///
/// Keep the key apart from the data it protects: in a key file in another directory (created
/// `0600` by ``loadOrCreate(at:)``), in the platform's keychain (via ``rawRepresentation``), or
/// derived from a passphrase the user types (``derived(fromPassphrase:saltFile:iterations:)``).
///
/// ```swift
/// let key = try await EncryptionKey.loadOrCreate(at: keysDirectory.appending(path: "vault.key"))
/// let token = ValueStore<Void, String>.encryptedFile(dataDirectory.appending(path: "token.enc"), key: key)
/// ```
///
/// A key prints only its ``id``, never its bytes. The bytes live in the platform's key type,
/// which wipes its memory when released.
public struct EncryptionKey: Sendable, Hashable, CustomStringConvertible {
    let secret: SecretKey

    /// The key's public name: 16 hexadecimal digits derived from the key, written into every file
    /// it encrypts, so a store can tell which key a file needs without revealing the key.
    public let id: String
    /// The 8 bytes ``id`` spells, as a file's header holds them: loads compare these, so a load
    /// formats no hexadecimal.
    let identifier: Data
    /// ``identifier`` read as a big-endian number, as a load reads the header's field.
    let identifierNumber: UInt64

    init(_ secret: SecretKey) {
        self.secret = secret
        identifier = secret.identifier
        identifierNumber = EncryptedFileFormat.number(identifier, at: 0)
        id = EncryptedFileFormat.hex(identifier)
    }

    /// A new key from the system's secure random generator.
    ///
    /// ```swift
    /// let key = EncryptionKey.random()
    /// ```
    ///
    /// - Returns: A fresh key; save it (``rawRepresentation``) or it is gone with the process.
    public static func random() -> Self {
        Self(.random())
    }

    /// A key from its 32 bytes, such as bytes kept in the platform's keychain.
    ///
    /// ```swift
    /// let key = try EncryptionKey(data: bytesFromKeychain)
    /// ```
    ///
    /// - Parameter data: Exactly 32 bytes.
    /// - Throws: ``ValueStoreError/Code/invalidConfiguration`` for any other length.
    public init(data: Data) throws {
        guard let secret = SecretKey(bytes: data) else {
            throw ValueStoreError(
                .invalidConfiguration,
                reason: "an encryption key has \(SecretKey.byteCount) bytes, not \(data.count)"
            )
        }
        self.init(secret)
    }

    /// The key's 32 bytes, to keep in a keychain or a key file. Handle with care.
    public var rawRepresentation: Data {
        secret.bytes
    }

    /// Names the key by its ``id`` only.
    public var description: String {
        "EncryptionKey(id: \(id))"
    }

    /// Keys are equal when their ids are, which happens only for the same key.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id == rhs.id
    }

    /// Hashes the key's id.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}

// MARK: - Key files

extension EncryptionKey {
    /// Loads the key kept in a key file, or creates the file with a new random key.
    ///
    /// ```swift
    /// let key = try await EncryptionKey.loadOrCreate(at: keysDirectory.appending(path: "vault.key"))
    /// ```
    ///
    /// The file is created `0600` in a `0700` directory, written atomically and durably, under the
    /// same cross-process lock as the file stores, so two processes racing to create it end up
    /// with the same key. Keep it apart from the encrypted files: a key next to its data protects
    /// nothing.
    ///
    /// > Important: As ssh does with private keys, the key file must belong to the process's
    /// > user and give the group and others no access (`chmod 600`), checked on the file that
    /// > is read, under the lock. Its directory must belong to that user (or root) and give
    /// > no one else write access, unless it has the sticky bit, as `/tmp` does: whoever can
    /// > write a directory can replace the files in it.
    ///
    /// - Parameter url: Where the key file lives.
    /// - Returns: The key in the file.
    /// - Throws: ``ValueStoreError/Code/corrupted`` when the file is not a key file,
    ///   ``ValueStoreError/Code/invalidConfiguration`` when another user owns it or may read it,
    ///   or others may write its directory, or an I/O error. A bad key file is never replaced.
    public static func loadOrCreate(at url: URL) async throws -> Self {
        let file = DurableFile(url, options: .private, fileSystem: .live)
        return try await BlockingIO.run { try await loadOrCreate(file) }
    }

    /// Reads or creates the key file, off the caller's executor.
    @concurrent static func loadOrCreate(_ file: DurableFile) async throws -> Self {
        let data = try await file.exclusively { _ in
            try KeyFileFormat.requireSafeDirectory(of: file)
            if let data = try file.read(checking: { try KeyFileFormat.requirePrivate($0, file) }) {
                return data
            }
            let data = KeyFileFormat.bytes(of: .random())
            try file.store(data)
            return data
        }
        return try KeyFileFormat.key(from: data, file: file)
    }
}

// MARK: - Passphrases

extension EncryptionKey {
    /// The fewest PBKDF2 iterations accepted, as OWASP's guidance for PBKDF2-HMAC-SHA256 allows.
    public static let minimumIterations = 210_000

    /// The most PBKDF2 iterations accepted: about 50 times the default, a few seconds of one
    /// core. A salt file that asks for more was changed or damaged, and is refused before any
    /// work rather than spending minutes of uncancellable CPU.
    public static let maximumIterations = 10_000_000

    /// ``minimumIterations`` through ``maximumIterations``.
    static var iterationRange: ClosedRange<Int> { minimumIterations...maximumIterations }

    /// Refuses an iteration count outside ``iterationRange``, whatever the `Int`.
    static func requireIterations(_ iterations: Int) throws {
        guard iterations >= minimumIterations else {
            throw ValueStoreError(
                .invalidConfiguration,
                reason: "PBKDF2 needs \(minimumIterations) iterations or more, not \(iterations)"
            )
        }
        guard iterations <= maximumIterations else {
            throw ValueStoreError(
                .invalidConfiguration,
                reason: "PBKDF2 accepts \(maximumIterations) iterations at most, not \(iterations)"
            )
        }
    }

    /// Derives a key from a passphrase with PBKDF2-HMAC-SHA256.
    ///
    /// ```swift
    /// let key = try EncryptionKey.derived(fromPassphrase: passphrase, salt: salt)
    /// ```
    ///
    /// The same passphrase, salt and iteration count always give the same key. Use a random salt
    /// of 16 bytes or more per user, stored with the data; ``derived(fromPassphrase:saltFile:iterations:)``
    /// does that for you.
    ///
    /// - Parameters:
    ///   - passphrase: What the user typed.
    ///   - salt: Random bytes stored with the data, at least 16.
    ///   - iterations: The PBKDF2 work factor; 600,000 by default, from ``minimumIterations`` to
    ///     ``maximumIterations``.
    /// - Returns: The derived key.
    /// - Throws: ``ValueStoreError/Code/invalidConfiguration`` for a short salt or an iteration
    ///   count outside the range (any `Int`, negative or huge, is refused, never a crash).
    public static func derived(fromPassphrase passphrase: String, salt: Data, iterations: Int = 600_000) throws -> Self
    {
        guard salt.count >= 16 else {
            throw ValueStoreError(
                .invalidConfiguration, reason: "a passphrase salt needs 16 bytes or more, not \(salt.count)")
        }
        try requireIterations(iterations)
        return Self(try SecretKey.derive(passphrase: passphrase, salt: salt, iterations: iterations))
    }

    /// Derives a key from a passphrase, with a random salt and the iteration count kept in a
    /// small file stored with the data (created on first use).
    ///
    /// ```swift
    /// let key = try await EncryptionKey.derived(
    ///     fromPassphrase: passphrase,
    ///     saltFile: dataDirectory.appending(path: "vault.salt")
    /// )
    /// ```
    ///
    /// The salt file is not secret, and it is needed to derive the key again: keep it with the
    /// encrypted files and back it up with them. It holds a key-check value, so a wrong
    /// passphrase throws ``ValueStoreError/Code/wrongKey`` here, before any data is read, and an
    /// edited salt, iteration count or check value is refused rather than used. See
    /// Documentation/EncryptedFiles.md for the format and what it can and cannot tell apart.
    ///
    /// > Important: `iterations` is checked before anything is created, so a rejected count
    /// > leaves no salt file behind. A salt file written by an earlier release (format version 1,
    /// > without a check value) is still read, and never rewritten.
    ///
    /// - Parameters:
    ///   - passphrase: What the user typed.
    ///   - saltFile: Where the salt lives; created `0600` with a random 16-byte salt if missing.
    ///   - iterations: The work factor written into a new salt file, from ``minimumIterations``
    ///     to ``maximumIterations``; an existing file's own count is used, so changing this
    ///     later does not change the key.
    /// - Returns: The derived key.
    /// - Throws: ``ValueStoreError/Code/invalidConfiguration`` for `iterations` outside the
    ///   range; ``ValueStoreError/Code/wrongKey`` when the passphrase does not match the salt
    ///   file's check value; ``ValueStoreError/Code/corrupted`` when the salt file is damaged or
    ///   edited (its checksum fails, or its count is outside the range);
    ///   ``ValueStoreError/Code/unsupportedFormat`` for an unknown version; or an I/O error. A
    ///   bad salt file is never replaced.
    public static func derived(
        fromPassphrase passphrase: String,
        saltFile: URL,
        iterations: Int = 600_000
    ) async throws -> Self {
        let file = DurableFile(saltFile, options: .private, fileSystem: .live)
        // The salt file's I/O and PBKDF2 both run on the I/O threads.
        return try await BlockingIO.run {
            try await derived(fromPassphrase: passphrase, saltFile: file, iterations: iterations)
        }
    }

    /// Reads or creates the salt file and derives the key (PBKDF2), off the caller's executor.
    @concurrent static func derived(
        fromPassphrase passphrase: String,
        saltFile file: DurableFile,
        iterations: Int
    ) async throws -> Self {
        try requireIterations(iterations)
        if let data = try file.read() {
            return try derived(fromPassphrase: passphrase, saltFileContents: data, file: file)
        }
        // PBKDF2 runs before the lock is taken: the file's check value needs the key. If another
        // process created the file meanwhile, its salt wins and the key is derived again.
        let salt = SecretKey.random().bytes.prefix(16)
        let key = try derived(fromPassphrase: passphrase, salt: Data(salt), iterations: iterations)
        let created = SaltFileFormat.bytes(salt: salt, iterations: iterations, key: key)
        let data = try await file.readOrCreate { created }
        if data == created {
            return key
        }
        return try derived(fromPassphrase: passphrase, saltFileContents: data, file: file)
    }

    /// The key a salt file's parameters derive from `passphrase`, checked against the file's
    /// check value when it has one.
    private static func derived(fromPassphrase passphrase: String, saltFileContents data: Data, file: DurableFile)
        throws -> Self
    {
        let parameters = try SaltFileFormat.parameters(from: data, file: file)
        let key = Self(
            try SecretKey.derive(passphrase: passphrase, salt: parameters.salt, iterations: parameters.iterations))
        if let check = parameters.check, !key.secret.isCheckValue(check.value, for: check.message) {
            throw ValueStoreError(
                .wrongKey,
                store: file.label,
                reason: "the passphrase does not match the salt file's key-check value: the passphrase is wrong "
                    + "(or the whole file was rewritten by someone who recomputed its checksum)"
            )
        }
        return key
    }
}
