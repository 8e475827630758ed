import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

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
