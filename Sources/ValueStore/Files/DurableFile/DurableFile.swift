import Foundation
import Synchronization

/// One file, replaced atomically and durably, and locked against writers in this process and
/// in others.
///
/// A save writes a new temporary file next to the target (created exclusively, never through a
/// symlink), writes every byte, syncs it, renames it over the target and syncs the directory.
/// A crash at any instant leaves the old file or the new one, complete. Writers hold the
/// in-process ``PathLocks`` entry and an advisory `flock` on a sidecar `.<name>.lock` file;
/// readers take no lock, since a rename never exposes a partial file.
///
/// Temporary files are named `.<name>.tmp-<16 hex digits>`; they exist only while a writer holds
/// the lock, so the first writer of a path in each process deletes any it finds: they were
/// orphaned by a crash. Only names of exactly that shape are deleted, never another store's files.
/// Loads read only the target's name, so an orphan is never mistaken for data.
///
/// A name too long to leave room for those suffixes (over 233 bytes) gets sidecar names built
/// from its start and a hash of the whole name, so every name the file system accepts can be
/// saved. A path that is not valid UTF-8 cannot be named exactly, so every operation refuses it
/// with ``ValueStoreError/Code/invalidConfiguration`` rather than call an existing file absent.
struct DurableFile: Sendable {
    let path: String
    let directory: String
    let name: String
    private(set) var options: FileOptions
    let fileSystem: FileSystem
    /// What every operation throws when the URL cannot be used as a path; `nil` when it can.
    let invalidPath: ValueStoreError?
    /// The start of the sidecar files' names: the name itself, or a shortened form of a long one.
    let sidecarStem: String

    /// The longest file name the file systems we run on accept, in bytes.
    static let maximumNameLength = 255
    /// The most bytes a load reads: a file at the path that is larger than this is refused.
    static let maximumSize = 1 << 30

    init(_ url: URL, options: FileOptions, fileSystem: FileSystem) {
        let url = url.standardizedFileURL
        path = url.path(percentEncoded: false)
        name = url.lastPathComponent
        var directory = url.deletingLastPathComponent().path(percentEncoded: false)
        while directory.count > 1 && directory.hasSuffix("/") {
            directory.removeLast()
        }
        self.directory = directory
        self.options = options
        self.fileSystem = fileSystem
        sidecarStem = Self.sidecarStem(for: name)
        invalidPath = Self.validate(url, path: path)
    }

    /// The same file with other options.
    init(copying file: DurableFile, options: FileOptions) {
        self = file
        self.options = options
    }

    /// Refuses what cannot be named exactly: a URL that is not a file URL, and a path whose bytes
    /// are not UTF-8, which Foundation would turn into other bytes or an empty path.
    private static func validate(_ url: URL, path: String) -> ValueStoreError? {
        let encoded = url.path(percentEncoded: true)
        guard url.isFileURL else {
            return ValueStoreError(
                .invalidConfiguration, store: "file '\(url)'", reason: "a file store needs a file URL")
        }
        guard let decoded = encoded.removingPercentEncoding, decoded == path, !path.isEmpty, !path.contains("\u{FFFD}")
        else {
            return ValueStoreError(
                .invalidConfiguration,
                store: "file '\(encoded)'",
                reason: "the path is not valid UTF-8, so it cannot be named exactly; rename the file"
            )
        }
        return nil
    }

    /// The name itself when `.<name>.tmp-<16 hex digits>` fits in a file name; otherwise the
    /// name's first characters, `~` and a hash of the whole name.
    static func sidecarStem(for name: String) -> String {
        let suffixLength = ".".utf8.count + ".tmp-".utf8.count + 16
        guard name.utf8.count + suffixLength > maximumNameLength else { return name }
        let hash = "~" + hexadecimal(fnv1a(name.utf8))
        var stem = ""
        for character in name {
            if stem.utf8.count + character.utf8.count + hash.utf8.count + suffixLength > maximumNameLength {
                break
            }
            stem.append(character)
        }
        return stem + hash
    }

    /// A 64-bit FNV-1a hash: stable across processes and runs, unlike `Hasher`.
    private static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }

    /// Exactly 16 lowercase hexadecimal digits.
    static func hexadecimal(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Throws the reason the path cannot be used, if there is one.
    func checkPath() throws {
        if let invalidPath {
            throw invalidPath
        }
    }

    /// Signals each change to the file, by this process or another (see ``FileChanges``); for a
    /// symbolic link, changes to the link and to the file it names now.
    func changeSignals() -> AsyncStream<Void> {
        let own = fileSystem.changes.signals(path: path, directory: directory)
        if isSymbolicLink {
            followLinkedFile()
        }
        return own
    }

    /// How errors name the store.
    var label: String { "file '\(path)'" }

    var lockPath: String { sibling(".\(sidecarStem).lock") }

    var temporaryPrefix: String { ".\(sidecarStem).tmp-" }

    /// Whether `entry` is a temporary file this library created for this path: the prefix and
    /// then hexadecimal digits only (16 of them; releases before 1.1 wrote 1 to 16).
    func isTemporaryFile(_ entry: String) -> Bool {
        guard entry.hasPrefix(temporaryPrefix) else { return false }
        let digits = entry.utf8.dropFirst(temporaryPrefix.utf8.count)
        return (1...16).contains(digits.count)
            && digits.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }

    var isDurable: Bool { options.durability == .durable }

    func sibling(_ name: String) -> String {
        directory == "/" ? "/\(name)" : "\(directory)/\(name)"
    }

    /// An I/O error naming this file, the step that failed and why.
    func failure(_ step: String, _ error: any Error) -> ValueStoreError {
        if let error = error as? ValueStoreError {
            return error.naming(label)
        }
        return ValueStoreError(.io, store: label, reason: "could not \(step): \(error)", underlyingError: error)
    }
}
