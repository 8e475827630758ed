public import Foundation
import Synchronization

/// Many small settings in one durable property-list file, each key its own typed store.
///
/// ```swift
/// let settings = SettingsFile(directory.appending(path: "settings.plist"))
/// let theme = settings.store("theme", as: String.self)
/// try await theme.save("dark")
/// try await settings.batch { batch in
///     try batch.set("dark", for: "theme")
///     try batch.set(16, for: "fontSize")
///     batch.remove("legacyFlag")
/// }
/// ```
///
/// - **Every key obeys the store laws.** A missing key throws ``ValueStoreError/notFound``; a key
///   whose value does not decode as the requested type throws
///   ``ValueStoreError/Code/decodingFailed`` for that key only.
/// - **A damaged file loses nothing.** A file that does not parse makes every key throw
///   ``ValueStoreError/Code/corrupted`` and refuses every write, and its bytes stay as they are.
/// - **Unknown keys are kept.** Keys written by a newer version of the app or another target keep
///   their exact values and types across every save. Keys are compared byte for byte, so
///   `"caf\u{e9}"` and `"cafe\u{301}"`, equal as Swift strings, are two keys, in a binary file and
///   in an XML one alike. What cannot be kept exactly is refused with
///   ``ValueStoreError/Code/unsupportedFormat``, the file left as it is, never merged nor repaired:
///   two such keys inside a nested dictionary, or text holding an unpaired UTF-16 surrogate. A
///   value no `Codable` type can hold (a keyed archiver's `UID`) is kept byte for byte, and only
///   its own key throws ``ValueStoreError/Code/unsupportedFormat``.
/// - **Durable group commit.** Every awaited save, remove or batch returns after a durable write
///   that contains it (temporary file, `fsync`, rename, directory `fsync`). Writes that arrive
///   while a commit is in flight join the next one, so many concurrent writers cost about two
///   commits, and there is no timer.
/// - **Atomic updates, with no lock held while user code runs.** `update` on a key store runs
///   its body on the entries, then commits under the file's locks, in this process and across
///   processes, if the file is still what the body started from; otherwise the body runs again.
///   Updates of one key in one process take turns, so they do not make each other run again. A
///   write to the file from a task started inside the body throws
///   ``ValueStoreError/Code/nestedWrite`` while the body runs. A batch is atomic as a whole.
/// - **Commits cost O(file).** Every commit encodes and writes the whole file; the encoding
///   happens before the file's locks are taken.
/// - **Reads from memory.** Each key store keeps its decoded value until this process commits a
///   change to the file.
///
/// The format is a binary property list whose top level is a dictionary from key to value, so
/// every value, a date's fractional seconds included, is kept exactly; XML property lists, which
/// earlier releases wrote, are read too, with the library's own reader, which keeps keys as
/// exactly. See the Settings guide.
public final class SettingsFile: Sendable {
    let file: DurableFile
    let state = Locked(State())
    /// Counts changes to ``State/entries``, so key stores can tell whether their value is current
    /// with one atomic load.
    let generation = Atomic<UInt64>(0)
    /// Whether the file changed while its directory was not watched (see SettingsFile+Watch.swift).
    @usableFromInline let freshness: FileFreshness

    /// The generation of the entries this process knows now.
    @usableFromInline
    var currentGeneration: UInt64 { generation.load(ordering: .acquiring) }

    /// The file's top-level dictionary, its keys compared byte for byte: `"caf\u{e9}"` and
    /// `"cafe\u{301}"` are two keys, though Swift's strings are equal.
    @usableFromInline typealias Entries = [PropertyListKey: PropertyListNode]

    /// A change to one key: a `nil` node removes it.
    @usableFromInline typealias Change = (key: PropertyListKey, node: PropertyListNode?)

    struct State {
        /// The file's entries as last read or committed; `nil` until read.
        var entries: Entries?
        /// The bytes `entries` were read from or written as (`nil`: no file); a transaction's
        /// commit checks the file still holds them.
        var data: Data?
        var pending: [PendingWrite] = []
        var isCommitting = false
        /// Follows the file's changes by other stores and processes, from the first use on.
        var watch: Task<Void, Never>?
        /// The entries the key streams were last signalled for, so that only the keys whose entry
        /// changed are signalled.
        var signalled = Signalled.unknown
        /// The loss of the directory's watch last reported (see ``FileChanges/trouble(of:)``), so
        /// that each loss is reported once.
        var reportedTrouble: UInt64?
    }

    /// What the key streams last saw.
    enum Signalled {
        /// Nothing was read yet.
        case unknown
        /// The file could not be read; every stream saw the failure.
        case failed
        case entries(Entries)

        /// Whether anything was read or failed yet.
        var isKnown: Bool {
            if case .unknown = self { false } else { true }
        }
    }

    /// Turns the entries into the file's bytes: the binary property-list writer, or a test's
    /// witness that checks no file lock is held while it runs.
    let encode: @Sendable (_ entries: Entries) -> Data

    /// This file's number as a writer, so its watch skips the signals of its own commits, which
    /// update the entries themselves (see ``ChangeOrigin``).
    let writer = ChangeOrigin.next()

    /// Each observed key's broadcaster: it signals the key's streams after a change to that key's
    /// entry, once the entries are current.
    let keyChanges = Locked<[PropertyListKey: ChangeBroadcaster]>([:])

    /// Changes waiting for the next commit, and the caller waiting for it.
    struct PendingWrite {
        let changes: [Change]
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Creates a settings file at `url`; nothing is read or written until a key is used.
    ///
    /// ```swift
    /// let settings = SettingsFile(directory.appending(path: "settings.plist"))
    /// ```
    ///
    /// - Parameters:
    ///   - url: The file's location.
    ///   - options: Durability and permissions, as for ``ValueStore/file(_:options:)``.
    public convenience init(_ url: URL, options: FileOptions = .default) {
        self.init(url, options: options, fileSystem: .live)
    }

    /// A settings file over the given file system, for tests that count or fail system calls,
    /// and for a sync replica's files, which share one file system.
    package convenience init(_ url: URL, options: FileOptions, fileSystem: FileSystem) {
        self.init(url, options: options, fileSystem: fileSystem, encode: BinaryPropertyList.data(of:))
    }

    /// A settings file over the given file system, encoding its entries with `encode`.
    init(
        _ url: URL,
        options: FileOptions,
        fileSystem: FileSystem,
        encode: @escaping @Sendable (_ entries: Entries) -> Data
    ) {
        file = DurableFile(url, options: options, fileSystem: fileSystem)
        freshness = FileFreshness(path: file.path, directory: file.directory, changes: file.fileSystem.changes)
        self.encode = encode
    }

    deinit {
        // Cancelled outside the lock: cancelling runs the watch's stream terminations.
        state.withLock { $0.watch }?.cancel()
    }

    /// What errors name: "settings file '/path/settings.plist'".
    var label: String { "settings \(file.label)" }

    /// How errors name one key.
    @usableFromInline
    func label(of key: String) -> String { "key '\(key)' in \(label)" }
}
