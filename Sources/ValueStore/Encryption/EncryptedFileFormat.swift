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
    /// the identity, its bytes in the authenticated data, and its item id (a SHA-256), also as
    /// the number a load compares the header's field with.
    struct Item: Sendable {
        let identity: String
        let identityBytes: Data
        let id: Data
        let idNumber: UInt64

        init(_ identity: String) {
            self.identity = identity
            identityBytes = Data(identity.utf8)
            id = EncryptedFileFormat.itemID(identity)
            idNumber = EncryptedFileFormat.number(id, at: 0)
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
    /// With a `memo`, a file identical to the last one it opened with the same key costs no
    /// decryption; every check before the decryption still runs.
    static func open(
        _ file: Data,
        with keyring: EncryptionKeyring,
        item: Item,
        store: String,
        memo: DecryptedFileMemo.Reading? = nil
    ) throws -> Data {
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
        guard bytes.count >= magic.count, number(bytes, at: 0, as: UInt32.self) == magicNumber else {
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
        let length = number(bytes, at: 36)
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
        guard number(bytes, at: 16) == item.idNumber else {
            throw failure(
                .itemMismatch,
                "the file was encrypted for another item, not '\(identity)': it was copied or renamed from another item's file"
            )
        }
        guard let secret = keyring.secret(withIdentifier: number(bytes, at: 8)) else {
            throw failure(
                .wrongKey,
                "the file was encrypted with key \(hex(field(8..<16))), but the store holds \(keyring.ids.joined(separator: ", "))"
            )
        }
        if let plaintext = memo?.plaintext(of: bytes, openedWith: secret) {
            return plaintext
        }
        // One buffer holds the sealed box (nonce, then ciphertext and tag) and after it the
        // authenticated data (header, then identity), copied straight from the file's bytes:
        // each allocation costs a credential's load about 0.3 µs.
        let sealedCount = Cipher.nonceByteCount + bytes.count - headerByteCount
        var buffer = Data(count: sealedCount + headerByteCount + item.identityBytes.count)
        buffer.withUnsafeMutableBytes { buffer in
            bytes.withUnsafeBytes { file in
                item.identityBytes.withUnsafeBytes { identity in
                    var end = 0
                    func append(_ part: UnsafeRawBufferPointer) {
                        UnsafeMutableRawBufferPointer(rebasing: buffer[end...]).copyMemory(from: part)
                        end += part.count
                    }
                    append(.init(rebasing: file[24..<36]))
                    append(.init(rebasing: file[headerByteCount...]))
                    append(.init(rebasing: file[..<headerByteCount]))
                    append(identity)
                }
            }
        }
        let (sealedBox, authenticated) = (buffer[..<sealedCount], buffer[sealedCount...])
        guard let plaintext = try Cipher.open(sealedBox, using: secret, authenticating: authenticated) else {
            throw failure(
                .authenticationFailed,
                "the file failed authentication: it was changed after it was written (tampered with or damaged)"
            )
        }
        memo?.remember(plaintext, of: bytes, openedWith: secret)
        return plaintext
    }

    /// The id of the key that wrote a file, if it looks like an encrypted file.
    static func keyID(of file: Data) -> String? {
        guard file.count >= headerByteCount, file.starts(with: magic) else { return nil }
        return hex(file[(file.startIndex + 8)..<(file.startIndex + 16)])
    }

    /// "VSEF" read as a big-endian number.
    static let magicNumber: UInt32 = 0x5653_4546

    /// The big-endian number in `bytes` at `offset` from their start; the caller checked the
    /// length. Loads compare header fields as numbers: slicing and comparing `Data` runs through
    /// generic collection code, and cost a credential's load about a microsecond in all.
    static func number<Number: FixedWidthInteger>(
        _ bytes: Data,
        at offset: Int,
        as type: Number.Type = UInt64.self
    ) -> Number {
        bytes.withUnsafeBytes { Number(bigEndian: $0.loadUnaligned(fromByteOffset: offset, as: Number.self)) }
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
