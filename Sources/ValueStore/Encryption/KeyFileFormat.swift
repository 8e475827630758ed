import Foundation

/// The two small files of key material, documented in Documentation/EncryptedFiles.md.
///
/// A key file: `VSKY`, format version 1, then the key's 32 bytes (37 bytes).
/// A salt file: `VSKS`, format version 1, the PBKDF2 iteration count (4 bytes, big-endian), then
/// a 16-byte salt (25 bytes).
enum KeyFileFormat {
    static let magic = Data("VSKY".utf8)
    static let version: UInt8 = 1

    static func bytes(of key: EncryptionKey) -> Data {
        magic + [version] + key.rawRepresentation
    }

    static func key(from data: Data, file: DurableFile) throws -> EncryptionKey {
        let expected = magic.count + 1 + SecretKey.byteCount
        guard data.count == expected, data.starts(with: magic), data[data.startIndex + 4] == version else {
            throw ValueStoreError(
                .corrupted,
                store: file.label,
                reason:
                    "not a ValueStore key file (expected \(expected) bytes starting with 'VSKY', found \(data.count) bytes)"
            )
        }
        return try EncryptionKey(data: data.suffix(SecretKey.byteCount))
    }

    /// Refuses a key file that other users may read, as ssh refuses such private keys.
    static func requirePrivate(_ file: DurableFile) throws {
        let permissions: UInt16
        do {
            permissions = try file.fileSystem.permissions(file.path)
        } catch {
            throw file.failure("read the key file's permissions", error)
        }
        guard permissions & 0o077 == 0 else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: file.label,
                reason: "the key file is readable by others (mode \(String(permissions, radix: 8))); "
                    + "make it private with chmod 600"
            )
        }
    }
}

enum SaltFileFormat {
    static let magic = Data("VSKS".utf8)
    static let version: UInt8 = 1

    static func bytes(salt: some DataProtocol, iterations: Int) -> Data {
        var data = magic + [version]
        withUnsafeBytes(of: UInt32(iterations).bigEndian) { data.append(contentsOf: $0) }
        data.append(contentsOf: salt)
        return data
    }

    static func parameters(from data: Data, file: DurableFile) throws -> (salt: Data, iterations: Int) {
        guard data.count == 25, data.starts(with: magic), data[data.startIndex + 4] == version else {
            throw ValueStoreError(
                .corrupted,
                store: file.label,
                reason: "not a ValueStore salt file (expected 25 bytes starting with 'VSKS', found \(data.count) bytes)"
            )
        }
        let bytes = Array(data)
        let iterations = bytes[5..<9].reduce(0) { $0 << 8 | Int($1) }
        return (Data(bytes[9...]), iterations)
    }
}
