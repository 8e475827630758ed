import Foundation

/// The keys an encrypted store may use: the current one, which encrypts every save, and
/// previous ones, still accepted for reading. Rotate keys with it.
///
/// ```swift
/// let keyring = EncryptionKeyring(current: newKey, previous: [oldKey])
/// let token = ValueStore<Void, String>.encryptedFile(url, keyring: keyring)
/// try await keyring.reencryptFile(at: url)   // rewrites it with newKey, if oldKey wrote it
/// ```
///
/// Each encrypted file names the key that wrote it (its ``EncryptionKey/id``), so loads pick the
/// right key without trying each one.
public struct EncryptionKeyring: Sendable, Hashable {
    /// The key that encrypts every save.
    public var current: EncryptionKey
    /// Keys still accepted for reading files written before a rotation.
    public var previous: [EncryptionKey]

    /// Creates a keyring.
    ///
    /// - Parameters:
    ///   - current: The key that encrypts every save.
    ///   - previous: Keys still accepted for reading.
    public init(current: EncryptionKey, previous: [EncryptionKey] = []) {
        self.current = current
        self.previous = previous
    }

    /// The key with the given id, if this keyring holds it.
    func key(withID id: String) -> EncryptionKey? {
        current.id == id ? current : previous.first { $0.id == id }
    }

    /// The secret of the key whose identifier is `number` (a file header's key id field, read as
    /// a big-endian number), if this keyring holds it.
    func secret(withIdentifier number: UInt64) -> SecretKey? {
        if current.identifierNumber == number {
            return current.secret
        }
        return previous.first { $0.identifierNumber == number }?.secret
    }

    /// The ids this keyring holds, for error messages.
    var ids: [String] {
        [current.id] + previous.map(\.id)
    }
}
