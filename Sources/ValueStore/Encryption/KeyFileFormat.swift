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

    /// Refuses a key file another user owns or other users may read, as ssh refuses such
    /// private keys: `descriptor` is the file being read, so the check and the read see the
    /// same file.
    static func requirePrivate(_ descriptor: Int32, _ file: DurableFile) throws {
        let status: FileStatus
        do {
            status = try file.fileSystem.status(descriptor)
        } catch {
            throw file.failure("read the key file's owner and permissions", error)
        }
        guard status.owner == geteuid() else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: file.label,
                reason: "the key file is owned by user \(status.owner), not by this process's user \(geteuid())"
            )
        }
        guard status.permissions & 0o077 == 0 else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: file.label,
                reason: "the key file is readable by others (mode \(String(status.permissions, radix: 8))); "
                    + "make it private with chmod 600"
            )
        }
    }

    /// Refuses a key file's directory that other users may write (unless it is sticky, as
    /// `/tmp` is) or that belongs to another user than this process's or root: they could
    /// replace the key file.
    static func requireSafeDirectory(of file: DurableFile) throws {
        let status: FileStatus
        do {
            let descriptor = try file.fileSystem.open(file.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
            defer {
                do {
                    try file.fileSystem.close(descriptor)
                } catch {
                    // The directory was only inspected: nothing to lose.
                }
            }
            status = try file.fileSystem.status(descriptor)
        } catch {
            throw file.failure("read the owner and permissions of the key file's directory", error)
        }
        let mode = String(status.permissions, radix: 8)
        guard status.owner == geteuid() || status.owner == 0 else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: file.label,
                reason: "the key file's directory '\(file.directory)' is owned by user \(status.owner), "
                    + "who could replace the key file; keep keys in a directory of your own"
            )
        }
        guard status.permissions & 0o022 == 0 || status.permissions & 0o1000 != 0 else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: file.label,
                reason: "the key file's directory '\(file.directory)' can be written by other users (mode \(mode)), "
                    + "who could replace the key file; make it private with chmod 700"
            )
        }
    }
}

/// A salt file: the parameters that derive a key from a passphrase, documented byte by byte in
/// Documentation/EncryptedFiles.md.
///
/// Version 2 (89 bytes): `VSKS`, `2`, the PBKDF2 iteration count (4 bytes, big-endian), a
/// 16-byte salt, a 32-byte key-check value, HMAC-SHA256 of the label `ValueStore salt file v2`
/// and the first 25 bytes under a subkey of the derived key, then a 32-byte SHA-256 of
/// everything before it. Version 1 (25 bytes, earlier releases) stops after the salt; it is
/// still read, never rewritten.
enum SaltFileFormat {
    static let magic = Data("VSKS".utf8)
    static let version: UInt8 = 2
    /// Magic, version, count and salt: what the check value covers.
    static let parametersByteCount = 25
    /// Where the checksum starts: it covers everything before.
    static let checksumOffset = 57
    static let byteCount = 89
    static let versionOneByteCount = 25
    static let checkLabel = Data("ValueStore salt file v2".utf8)

    /// What a salt file holds.
    struct Parameters {
        var salt: Data
        var iterations: Int
        /// The key-check value and the bytes it covers; `nil` in a version 1 file.
        var check: (value: Data, message: Data)?
    }

    /// A version 2 salt file for `key`, derived from a passphrase with `salt` and `iterations`.
    static func bytes(salt: some DataProtocol, iterations: Int, key: EncryptionKey) -> Data {
        var data = magic + [version]
        withUnsafeBytes(of: UInt32(iterations).bigEndian) { data.append(contentsOf: $0) }
        data.append(contentsOf: salt)
        data += key.secret.checkValue(for: checkLabel + data)
        return data + Digest.sha256(data)
    }

    /// The parameters of a salt file, checked: its format, its checksum and the iteration count's
    /// range, all before any PBKDF2 work.
    static func parameters(from data: Data, file: DurableFile) throws -> Parameters {
        let bytes = Array(data)
        guard bytes.count > 4, bytes.starts(with: magic) else {
            throw ValueStoreError(
                .corrupted,
                store: file.label,
                reason: "not a ValueStore salt file (expected 'VSKS' and a format version, found \(bytes.count) bytes)"
            )
        }
        let expected: Int
        switch bytes[4] {
        case 1: expected = versionOneByteCount
        case version: expected = byteCount
        default:
            throw ValueStoreError(
                .unsupportedFormat,
                store: file.label,
                reason: "the salt file is in format version \(bytes[4]); this library reads versions 1 and 2"
            )
        }
        guard bytes.count == expected else {
            throw ValueStoreError(
                .corrupted,
                store: file.label,
                reason: "the salt file has \(bytes.count) bytes; its format version \(bytes[4]) has \(expected)"
            )
        }
        if expected == byteCount {
            guard Digest.sha256(Data(bytes[..<checksumOffset])) == Data(bytes[checksumOffset...]) else {
                throw ValueStoreError(
                    .corrupted,
                    store: file.label,
                    reason: "the salt file was changed or damaged: its checksum does not match its contents"
                )
            }
        }
        let iterations = bytes[5..<9].reduce(0) { $0 << 8 | Int($1) }
        guard EncryptionKey.iterationRange.contains(iterations) else {
            throw ValueStoreError(
                .corrupted,
                store: file.label,
                reason: "the salt file asks for \(iterations) PBKDF2 iterations, outside the accepted "
                    + "\(EncryptionKey.minimumIterations) to \(EncryptionKey.maximumIterations): it was changed or damaged"
            )
        }
        let check =
            expected == byteCount
            ? (Data(bytes[parametersByteCount..<checksumOffset]), checkLabel + Data(bytes[..<parametersByteCount]))
            : nil
        return Parameters(salt: Data(bytes[9..<parametersByteCount]), iterations: iterations, check: check)
    }
}
