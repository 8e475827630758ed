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
///
/// A load asks it through a ``Reading`` taken before the file is read: once ``forget()`` has run
/// (a `remove()`), a load that read the file before it cannot bring its plaintext back.
final class DecryptedFileMemo: Sendable {
    /// Larger files are decrypted every time.
    static let largestFile = 64 * 1024

    private struct Entry: Sendable {
        var file: Data
        var secret: SecretKey
        var plaintext: Data
    }

    private struct State: Sendable {
        var last: Entry?
        /// How many times the memo forgot: a reading taken before the last time remembers nothing.
        var forgotten: UInt64 = 0
    }

    private let state = Mutex(State())

    /// What one load may ask and tell the memo: taken before the file is read.
    struct Reading: Sendable {
        fileprivate let memo: DecryptedFileMemo
        fileprivate let forgotten: UInt64

        /// The plaintext of `file` if it is, byte for byte, the last file opened with `secret`.
        func plaintext(of file: Data, openedWith secret: SecretKey) -> Data? {
            guard let entry = memo.state.withLock({ $0.last }), entry.file == file, entry.secret == secret else {
                return nil
            }
            return entry.plaintext
        }

        /// Keeps `plaintext` as what `file` decrypts to with `secret`, unless the memo forgot
        /// since this reading was taken: the file may be gone.
        func remember(_ plaintext: Data, of file: Data, openedWith secret: SecretKey) {
            guard file.count <= DecryptedFileMemo.largestFile else { return }
            memo.state.withLock { state in
                guard state.forgotten == forgotten else { return }
                state.last = Entry(file: file, secret: secret, plaintext: plaintext)
            }
        }
    }

    /// Starts a load's use of the memo; take it before reading the file.
    func reading() -> Reading {
        Reading(memo: self, forgotten: state.withLock { $0.forgotten })
    }

    /// Forgets the last file, its plaintext and the key that opened it, and everything a load
    /// that started before now would remember.
    func forget() {
        state.withLock { state in
            state.last = nil
            state.forgotten &+= 1
        }
    }

    /// Whether the memo holds a file: for tests.
    var isEmpty: Bool { state.withLock { $0.last == nil } }
}
