// The library's only cryptography, and the only file that imports it: CryptoKit where the
// operating system has it, Apple's swift-crypto (the same API, open source) elsewhere. Nothing
// here is hand-written cryptography; it chooses primitives and arranges their inputs.

import Foundation

#if canImport(CryptoKit)
import CommonCrypto
import CryptoKit
#else
import Crypto
import _CryptoExtras
#endif

/// A 256-bit key held by the platform's key type, which wipes its memory when released.
struct SecretKey: Sendable, Equatable {
    fileprivate let key: SymmetricKey

    static let byteCount = 32

    fileprivate init(_ key: SymmetricKey) {
        self.key = key
    }

    /// A new key from the system's secure random generator.
    static func random() -> Self {
        Self(SymmetricKey(size: .bits256))
    }

    /// A key from exactly ``byteCount`` bytes.
    init?(bytes: some ContiguousBytes) {
        let key = SymmetricKey(data: bytes)
        guard key.bitCount == Self.byteCount * 8 else { return nil }
        self.key = key
    }

    var bytes: Data {
        key.withUnsafeBytes { Data($0) }
    }

    /// Whether two keys are the same key, compared in constant time.
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.key == rhs.key
    }

    /// A public name for the key: the first 8 bytes of an HMAC of a fixed label. It tells keys
    /// apart without revealing anything about them.
    var identifier: Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data("ValueStore key identifier v1".utf8), using: key).prefix(8))
    }

    /// A key-check value over `message` (a salt file's parameters): HMAC-SHA256 under a subkey
    /// that HKDF-SHA256 derives from this key, so the check never uses the encryption key itself.
    func checkValue(for message: Data) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: message, using: checkKey))
    }

    /// Whether `value` is this key's check value over `message`, compared in constant time.
    func isCheckValue(_ value: Data, for message: Data) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(value, authenticating: message, using: checkKey)
    }

    private var checkKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Data("ValueStore salt file check key v1".utf8), outputByteCount: 32)
    }

    /// Derives a key from a passphrase with PBKDF2-HMAC-SHA256.
    static func derive(passphrase: String, salt: Data, iterations: Int) throws -> Self {
        #if canImport(CryptoKit)
        var derived = [UInt8](repeating: 0, count: byteCount)
        let password = Array(passphrase.utf8)
        let status = password.withUnsafeBufferPointer { password in
            salt.withUnsafeBytes { salt in
                CCKeyDerivationPBKDF(
                    CCPBKDFAlgorithm(kCCPBKDF2),
                    password.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                    password.count,
                    salt.bindMemory(to: UInt8.self).baseAddress,
                    salt.count,
                    CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256),
                    UInt32(iterations),
                    &derived,
                    derived.count
                )
            }
        }
        guard status == kCCSuccess else {
            throw ValueStoreError(.invalidConfiguration, reason: "PBKDF2 failed with status \(status)")
        }
        defer { derived.withUnsafeMutableBytes { memset_s($0.baseAddress, $0.count, 0, $0.count) } }
        return Self(SymmetricKey(data: derived))
        #else
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(passphrase.utf8),
            salt: salt,
            using: .sha256,
            outputByteCount: byteCount,
            unsafeUncheckedRounds: iterations
        )
        return Self(key)
        #endif
    }
}

/// Authenticated encryption with AES-256-GCM: a fresh random nonce for every seal.
enum Cipher {
    static let nonceByteCount = 12
    static let tagByteCount = 16

    /// A fresh nonce from the system's secure random generator.
    static func randomNonce() -> Data {
        Data(AES.GCM.Nonce())
    }

    /// Encrypts `plaintext` under `nonce`, authenticating it together with `authenticatedData`.
    /// Never reuse a nonce with the same key.
    static func seal(
        _ plaintext: Data,
        using key: SecretKey,
        nonce: Data,
        authenticating authenticatedData: Data
    ) throws -> (ciphertext: Data, tag: Data) {
        let box = try AES.GCM.seal(
            plaintext, using: key.key, nonce: AES.GCM.Nonce(data: nonce), authenticating: authenticatedData)
        return (box.ciphertext, box.tag)
    }

    /// Decrypts `combined` (nonce, ciphertext, tag, in that order), or returns `nil` when the
    /// data, the tag or the authenticated data do not match: a wrong key, tampering, or data
    /// moved from another item.
    static func open(
        _ combined: Data,
        using key: SecretKey,
        authenticating authenticatedData: Data
    ) throws -> Data? {
        // `SealedBox(combined:)` is specialized for `Data`; the initializer that takes the three
        // parts copies them through generic collection code, about 1 µs per open on Linux, as
        // much as half of the decryption of a small value.
        let box = try AES.GCM.SealedBox(combined: combined)
        do {
            return try AES.GCM.open(box, using: key.key, authenticating: authenticatedData)
        } catch {
            // Opening fails only on authentication: the caller reports it with the file's name.
            return nil
        }
    }
}

/// SHA-256, for naming items without storing their names.
enum Digest {
    static func sha256(_ data: Data) -> Data {
        Data(SHA256.hash(data: data))
    }
}
