import Synchronization

/// Holds encryption keys in memory and can lock them away, like a keychain that locks with the
/// device.
///
/// Stores built on a vault (``ValueStore/encryptedFile(_:vault:identity:durability:)``) work while
/// it is unlocked and throw ``ValueStoreError/Code/locked`` while it is locked: a distinct error,
/// never absence, so a default never stands in for a secret the app simply cannot read yet.
///
/// ```swift
/// let vault = KeyVault()                         // locked
/// let token = ValueStore<Void, String>.encryptedFile(url, vault: vault)
/// vault.unlock(with: try await EncryptionKey.loadOrCreate(at: keyURL))
/// try await token.save("s3cr3t")
/// vault.lock()                                   // loads now throw `locked`
/// ```
public final class KeyVault: Sendable {
    // The keys, or nil while locked; Mutex makes the class Sendable without @unchecked.
    private let keys: Mutex<EncryptionKeyring?>

    /// Creates a vault, locked.
    public init() {
        keys = Mutex(nil)
    }

    /// Creates a vault unlocked with a keyring.
    ///
    /// - Parameter keyring: The keys to hold.
    public init(unlockedWith keyring: EncryptionKeyring) {
        keys = Mutex(keyring)
    }

    /// Unlocks the vault with one key.
    ///
    /// - Parameter key: The key stores use until the vault is locked.
    public func unlock(with key: EncryptionKey) {
        unlock(with: EncryptionKeyring(current: key))
    }

    /// Unlocks the vault with a keyring, for example during a key rotation.
    ///
    /// - Parameter keyring: The keys stores use until the vault is locked.
    public func unlock(with keyring: EncryptionKeyring) {
        keys.withLock { $0 = keyring }
    }

    /// Locks the vault: stores built on it throw ``ValueStoreError/Code/locked`` until it is
    /// unlocked. Operations already running finish with the keys they started with.
    public func lock() {
        keys.withLock { $0 = nil }
    }

    /// Whether the vault is locked.
    public var isLocked: Bool {
        keys.withLock { $0 == nil }
    }

    /// The keys, or ``ValueStoreError/Code/locked`` naming the store that asked.
    func keyring(for store: String) throws -> EncryptionKeyring {
        guard let keyring = keys.withLock({ $0 }) else {
            throw ValueStoreError(.locked, store: store, reason: "the key vault is locked; unlock it to read or write")
        }
        return keyring
    }
}
