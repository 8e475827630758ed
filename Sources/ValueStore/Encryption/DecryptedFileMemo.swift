import Foundation
import Synchronization

/// The last file an encrypted store decrypted, with the key that opened it and the plaintext, so
/// that a load of a byte-identical file under the same key skips the decryption.
///
/// It is sound because a file's bytes are all authenticated: the same bytes under the same key
/// and item decrypt to the same plaintext, and any changed byte misses, so a damaged or tampered
/// file is opened, and refused, in full. Every check of the header, the key lookup included, runs
/// before the memo is asked. Only stores that hold their key for as long as they live have one
/// (built with `key:` or `keyring:`), so it keeps the plaintext beside a key that decrypts the
/// file anyway; a store whose key comes with each call (a vault, an environment) keeps neither.
/// Files over ``largestFile`` are not kept, so a large file never sits in memory twice.
final class DecryptedFileMemo: Sendable {
    /// Larger files are decrypted every time.
    static let largestFile = 64 * 1024

    private struct Entry: Sendable {
        var file: Data
        var secret: SecretKey
        var plaintext: Data
    }

    private let last = Mutex<Entry?>(nil)

    /// The plaintext of `file` if it is, byte for byte, the last file opened with `secret`.
    func plaintext(of file: Data, openedWith secret: SecretKey) -> Data? {
        guard let entry = last.withLock({ $0 }), entry.file == file, entry.secret == secret else {
            return nil
        }
        return entry.plaintext
    }

    /// Forgets the last file: its plaintext, and the key that opened it.
    func forget() {
        last.withLock { $0 = nil }
    }

    /// Keeps `plaintext` as what `file` decrypts to with `secret`.
    func remember(_ plaintext: Data, of file: Data, openedWith secret: SecretKey) {
        guard file.count <= Self.largestFile else { return }
        last.withLock { $0 = Entry(file: file, secret: secret, plaintext: plaintext) }
    }
}
