import Foundation

/// The bytes of an encrypted file, version 1, documented byte by byte in
/// Documentation/EncryptedFiles.md:
///
/// | Offset | Size | Field |
/// |---|---|---|
/// | 0 | 4 | magic `VSEF` |
/// | 4 | 1 | format version, 1 |
/// | 5 | 1 | algorithm, 1 = AES-256-GCM |
/// | 6 | 2 | reserved, zero |
/// | 8 | 8 | key id: which key encrypted the file |
/// | 16 | 8 | item id: the first 8 bytes of SHA-256 of the item's identity |
/// | 24 | 12 | nonce, random for every save |
/// | 36 | 8 | ciphertext length, big-endian |
/// | 44 | n | ciphertext |
/// | 44 + n | 16 | authentication tag |
///
/// The authenticated data is the 44-byte header followed by the item's identity, so changing any
/// byte, or moving the file to another item's name, fails authentication.
enum EncryptedFileFormat {
    static let magic = Data("VSEF".utf8)
    static let version: UInt8 = 1
    static let aes256GCM: UInt8 = 1
    static let headerByteCount = 44

    /// What a file is bound to, worked out once per store rather than on every load and save:
    /// the identity, its bytes in the authenticated data, and its item id (a SHA-256).
    struct Item: Sendable {
        let identity: String
        let identityBytes: Data
        let id: Data

        init(_ identity: String) {
            self.identity = identity
            identityBytes = Data(identity.utf8)
            id = EncryptedFileFormat.itemID(identity)
        }
    }

    /// Encrypts `plaintext` for the item `identity` with `key`, under a fresh random nonce.
    static func seal(_ plaintext: Data, with key: EncryptionKey, identity: String) throws -> Data {
        try seal(plaintext, with: key, item: Item(identity))
    }

    /// Encrypts `plaintext` for `item` with `key`, under a fresh random nonce.
    static func seal(_ plaintext: Data, with key: EncryptionKey, item: Item) throws -> Data {
        // The nonce is part of the authenticated header, so it is drawn first.
        let nonce = Cipher.randomNonce()
        var header = magic + [version, aes256GCM, 0, 0] + key.identifier + item.id + nonce
        withUnsafeBytes(of: UInt64(plaintext.count).bigEndian) { header.append(contentsOf: $0) }
        let sealed = try Cipher.seal(
            plaintext, using: key.secret, nonce: nonce, authenticating: authenticatedData(header, item))
        return header + sealed.ciphertext + sealed.tag
    }

    /// Decrypts a file for the item `identity`, with whichever key of `keyring` wrote it.
    static func open(_ file: Data, with keyring: EncryptionKeyring, identity: String, store: String) throws -> Data {
        try open(file, with: keyring, item: Item(identity), store: store)
    }

    /// Decrypts a file for `item`, with whichever key of `keyring` wrote it.
    ///
    /// Each way a file can be wrong has its own error, and none of them is `notFound`.
    static func open(_ file: Data, with keyring: EncryptionKeyring, item: Item, store: String) throws -> Data {
        let identity = item.identity
        // Fields are slices of the file, read at offsets from its start (it may itself be a slice).
        let bytes = file
        let start = bytes.startIndex
        func field(_ range: Range<Int>) -> Data {
            bytes[(start + range.lowerBound)..<(start + range.upperBound)]
        }
        func failure(_ code: ValueStoreError.Code, _ reason: String) -> ValueStoreError {
            ValueStoreError(code, store: store, reason: reason)
        }
        guard !bytes.isEmpty else {
            throw failure(.corrupted, "the file is empty (0 bytes), not an encrypted file")
        }
        guard bytes.count >= magic.count, field(0..<magic.count) == magic else {
            throw failure(.corrupted, "the file is not a ValueStore encrypted file (it does not start with 'VSEF')")
        }
        guard bytes.count > 4 else {
            throw failure(.corrupted, "the file is truncated: \(bytes.count) bytes, shorter than the header")
        }
        /// Throws `unsupportedFormat` unless the header byte at `offset` is `expected`.
        func require(_ offset: Int, is expected: UInt8, else reason: (_ found: UInt8) -> String) throws {
            let found = bytes[start + offset]
            guard found == expected else { throw failure(.unsupportedFormat, reason(found)) }
        }
        try require(4, is: version) { "the file is in format version \($0); this library reads version \(version)" }
        guard bytes.count >= headerByteCount + Cipher.tagByteCount else {
            throw failure(.corrupted, "the file is truncated: \(bytes.count) bytes, shorter than a header and a tag")
        }
        try require(5, is: aes256GCM) { "the file uses encryption algorithm \($0); this library knows 1 (AES-256-GCM)" }
        let length = field(36..<44).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let expected = UInt64(headerByteCount + Cipher.tagByteCount).addingReportingOverflow(length)
        guard !expected.overflow, expected.partialValue == UInt64(bytes.count) else {
            let shorter = expected.overflow || expected.partialValue > UInt64(bytes.count)
            throw failure(
                .corrupted,
                shorter
                    ? "the file is truncated: its header promises \(length) bytes of data, the file holds \(bytes.count - headerByteCount - Cipher.tagByteCount)"
                    : "the file has \(UInt64(bytes.count) - expected.partialValue) unexpected bytes after its data"
            )
        }
        guard field(16..<24) == item.id else {
            throw failure(
                .itemMismatch,
                "the file was encrypted for another item, not '\(identity)': it was copied or renamed from another item's file"
            )
        }
        guard let key = keyring.key(withIdentifier: field(8..<16)) else {
            throw failure(
                .wrongKey,
                "the file was encrypted with key \(hex(field(8..<16))), but the store holds \(keyring.ids.joined(separator: ", "))"
            )
        }
        guard
            let plaintext = try Cipher.open(
                ciphertext: field(headerByteCount..<(bytes.count - Cipher.tagByteCount)),
                nonce: field(24..<36),
                tag: field((bytes.count - Cipher.tagByteCount)..<bytes.count),
                using: key.secret,
                authenticating: authenticatedData(field(0..<headerByteCount), item)
            )
        else {
            throw failure(
                .authenticationFailed,
                "the file failed authentication: it was changed after it was written (tampered with or damaged)"
            )
        }
        return plaintext
    }

    /// The id of the key that wrote a file, if it looks like an encrypted file.
    static func keyID(of file: Data) -> String? {
        guard file.count >= headerByteCount, file.starts(with: magic) else { return nil }
        return hex(file[(file.startIndex + 8)..<(file.startIndex + 16)])
    }

    private static func itemID(_ identity: String) -> Data {
        Digest.sha256(Data("ValueStore item \(identity)".utf8)).prefix(8)
    }

    /// The header, then the identity's bytes, in one allocation.
    private static func authenticatedData(_ header: Data, _ item: Item) -> Data {
        var data = Data(capacity: header.count + item.identityBytes.count)
        data.append(header)
        data.append(item.identityBytes)
        return data
    }

    /// Lowercase hexadecimal, without `String(format:)`, which is slow on some platforms and
    /// runs on every load.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        characters.reserveCapacity(16)
        for byte in bytes {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
