import Foundation
import ValueStore

/// A replica's durable state: one settings file per account, in a folder of its own under the
/// replica's directory, whose entries are the replica's meta, one record per synced key, its
/// archive and its rejected changes; and the journal beside it, which each commit is appended to
/// and which is folded into the settings file as it grows (see ``ReplicaJournal``).
///
/// Each entry holds its value as JSON text: a string is the settings file's fast path, with no
/// round trip through Foundation's property-list encoder, which a local save would pay for.
struct ReplicaFiles: Sendable {
    /// The account's folder.
    let folder: URL
    let settings: SettingsFile
    let journal: ReplicaJournal
    /// The folder's lock, which every process using the folder takes to commit.
    let lock: ReplicaFolderLock

    /// The settings file's name in the account's folder.
    static let settingsName = "sync.plist"

    /// The entries' names.
    static let metaKey = "replica"
    static let archiveKey = "archive"
    static let rejectedKey = "rejected"
    static let recordPrefix = "record:"

    init(
        directory: URL,
        account: SyncAccount,
        options: FileOptions,
        foldingSize: Int = 256 * 1024,
        fileSystem: FileSystem = .live
    ) {
        folder = Self.folder(in: directory, for: account.id)
        settings = SettingsFile(folder.appending(path: Self.settingsName), options: options, fileSystem: fileSystem)
        journal = ReplicaJournal(
            path: folder.appending(path: "sync.journal").path(percentEncoded: false), foldingSize: foldingSize,
            permissions: options.permissions, fileSystem: fileSystem)
        lock = ReplicaFolderLock(
            path: folder.appending(path: "sync.lock").path(percentEncoded: false),
            permissions: mode_t(options.permissions), fileSystem: fileSystem)
    }

    /// The account's folder in `directory`: at ``folderPath(for:)``; for a long identity whose
    /// folder was named before that path (cut, with a hash of the whole), that folder while it
    /// exists and the new one does not, so that its outbox is not left behind.
    static func folder(in directory: URL, for account: String) -> URL {
        let folder = directory.appending(path: folderPath(for: account), directoryHint: .isDirectory)
        let name = escaped(account)
        guard name.utf8.count > 120 else { return folder }
        var hash = FNV1a()
        hash.mix(account.utf8)
        let earlier = directory.appending(path: String(name.prefix(100)) + "-" + hash.hex, directoryHint: .isDirectory)
        let exists = { (url: URL) in FileManager.default.fileExists(atPath: url.path(percentEncoded: false)) }
        return !exists(folder) && exists(earlier) ? earlier : folder
    }

    /// The account's folder, relative to the directory: the identity with every byte but
    /// `a`-`z`, `0`-`9`, `-` and `_` written `%XX` (upper-case hex), so two accounts never share
    /// a folder, not even on a file system that ignores case. A name over 120 bytes is cut into
    /// folders of 120 bytes, each inside the one before, the first marked `%+`, which no escaped
    /// name holds: the mapping is one to one, and no name is too long for a file system.
    static func folderPath(for account: String) -> String {
        let name = escaped(account)
        guard name.utf8.count > 120 else { return name }
        var parts: [Substring] = []
        var rest = Substring(name)
        while !rest.isEmpty {
            parts.append(rest.prefix(120))
            rest = rest.dropFirst(120)
        }
        return "%+" + parts.joined(separator: "/")
    }

    /// The identity with every byte but `a`-`z`, `0`-`9`, `-` and `_` written `%XX`.
    private static func escaped(_ account: String) -> String {
        var name = ""
        for byte in account.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.append(Character(UnicodeScalar(byte)))
            default:
                name += (byte < 16 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
            }
        }
        return name
    }

    /// The file in the account's folder that names the account.
    static let accountName = "sync.account"

    /// Refuses the folder when its record names another account than `account`; returns
    /// whether it has a record.
    func check(_ account: String) throws -> Bool {
        let url = folder.appending(path: Self.accountName)
        let recorded: String
        do {
            recorded = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        } catch CocoaError.fileReadNoSuchFile, CocoaError.fileNoSuchFile {
            return false
        } catch {
            throw ValueStoreError(
                .io, store: "sync folder '\(folder.path(percentEncoded: false))'",
                reason: "the record of the folder's account could not be read", underlyingError: error)
        }
        // Empty: its write was cut short by a crash, and nothing else was in the folder's name.
        guard !recorded.isEmpty else { return false }
        guard recorded == account else {
            throw ValueStoreError(
                .invalidConfiguration, store: "sync folder '\(folder.path(percentEncoded: false))'",
                reason: "the folder holds the replica of account '\(recorded)', not of '\(account)'; each"
                    + " account's replica has a folder of its own, and nothing was read or written")
        }
        return true
    }

    /// Refuses the folder when its record names another account; records `account` in a
    /// folder with no record (a new one, or one from before records were kept: its account is
    /// the one whose name maps to it), unless this process may only read the folder; off the
    /// caller's executor.
    @concurrent func claim(for account: String) async throws {
        guard try !check(account) else { return }
        let path = folder.path(percentEncoded: false)
        guard access(path, W_OK) == 0 else { return }  // read-only: read, never claimed
        do {
            try Data(account.utf8).write(to: folder.appending(path: Self.accountName), options: .atomic)
        } catch {
            throw ValueStoreError(
                .io, store: "sync folder '\(path)'", reason: "the folder's account could not be recorded",
                underlyingError: error)
        }
    }

    /// Creates the folder if needed and returns its marker, off the caller's executor.
    @concurrent func prepareFolder() async throws -> FolderMarker {
        let path = folder.path(percentEncoded: false)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw ValueStoreError(
                .io, store: "sync folder '\(path)'", reason: "the folder could not be created", underlyingError: error)
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ValueStoreError(
                .io, store: "sync folder '\(path)'", reason: "stat failed with errno \(errno)")
        }
        return FolderMarker(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }

    /// Everything the replica holds: the settings file's meta (`nil` before the first open),
    /// records, archive and rejected changes, with the journal's entries applied in order; off
    /// the caller's executor. The journal is opened to append (read only in a folder this
    /// process may only read).
    @concurrent func load() async throws -> Loaded {
        var loaded = try settingsEntries()
        loaded.apply(try await journal.open())
        return loaded
    }

    /// What ``load()`` returns, read on this thread, changing nothing, in a folder that is
    /// `account`'s; for a status asked for before the replica opened its folder.
    func peek(for account: String) throws -> Loaded {
        _ = try check(account)
        var loaded = try settingsEntries()
        loaded.apply(try journal.read())
        return loaded
    }

    /// The settings file's entries, read again, with `journaled` (the journal's) applied; after
    /// another process folded the journal, off the caller's executor.
    @concurrent func reload(applying journaled: Changes) async throws -> Loaded {
        var loaded = try settingsEntries()
        loaded.apply(journaled)
        return loaded
    }

    /// The settings file's entries, read now.
    private func settingsEntries() throws -> Loaded {
        let strings = try settings.stringsNow()
        var loaded = Loaded(meta: try entry(Self.metaKey, in: strings))
        for name in strings.keys where name.hasPrefix(Self.recordPrefix) {
            loaded.records[String(name.dropFirst(Self.recordPrefix.count))] = try entry(name, in: strings)
        }
        loaded.archive = try entry(Self.archiveKey, in: strings) ?? []
        loaded.rejected = try entry(Self.rejectedKey, in: strings) ?? []
        return loaded
    }

    /// The entry `name`, decoded from its JSON text; `nil` when the file has none.
    private func entry<Value: Decodable>(_ name: String, in strings: [String: String]) throws -> Value? {
        guard let text = strings[name] else { return nil }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw ValueStoreError(
                .decodingFailed, store: settings.store(name, as: String.self).label,
                reason: "the sync entry is not the JSON of a \(Value.self)", underlyingError: error)
        }
    }

    /// The JSON text of an entry.
    private static func text(of value: some Encodable, name: String) throws -> String {
        do {
            return String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: "sync entry '\(name)'", reason: "the entry does not encode as JSON",
                underlyingError: error)
        }
    }

    struct Loaded {
        var meta: ReplicaMeta?
        var records: [String: LocalRecord] = [:]
        var archive: [SyncConflict] = []
        var rejected: [SyncConflict] = []

        /// Takes a journal's entries over the settings file's.
        mutating func apply(_ journaled: Changes) {
            meta = journaled.meta ?? meta
            for (key, record) in journaled.records {
                records[key] = record
            }
            archive = journaled.archive ?? archive
            rejected = journaled.rejected ?? rejected
        }
    }

    /// One durable commit of the given entries: the meta, records (`nil` removes one), and the
    /// archive and rejected lists, each only when given. It is one entry appended to the journal;
    /// when that makes the journal too long, the journal is folded into the settings file.
    ///
    /// Too long is past the journal's folding size and past half the settings file's size: a
    /// fold rewrites the whole file, so folding at a fixed size made `n` changes cost `n²`
    /// (every few hundred kilobytes, a file that grows with the keys). This way what folds
    /// write is at most three times what the journal took in.
    ///
    /// Not `flushing`, its entry is flushed with the next commit's (or by ``ReplicaJournal/flush()``),
    /// unless an entry before it is not flushed yet.
    func commit(_ changes: Changes, flushing: Bool = true) async throws {
        guard !changes.isEmpty else { return }
        if journal.isReadOnly {
            throw ValueStoreError(
                .io, store: "sync folder '\(folder.path(percentEncoded: false))'",
                reason: "the replica's folder is read-only to this process: it reads the synced values, and"
                    + " cannot save; nothing was written")
        }
        if journal.length > 8 * journal.foldingSize, journal.length > 4 * settingsSize {
            // Folds kept failing: this one's error is the commit's, before anything is written.
            try await fold()
        }
        guard try await journal.append(changes, flushing: flushing), journal.length > settingsSize / 2 else { return }
        do {
            try await fold()
        } catch {
            // The commit is durable in the journal, so a failed fold does not fail it: the
            // journal stays as it is, the next commit folds again, and one that finds the
            // journal eight times too long fails with the fold's error.
        }
    }

    /// The settings file's size in bytes; 0 when it cannot be read (a fold then goes ahead).
    private var settingsSize: Int {
        let path = folder.appending(path: Self.settingsName).path(percentEncoded: false)
        return (try? journal.fileSystem.pathStatus(path).size) ?? 0
    }

    /// Writes what the journal holds into the settings file and makes that durable (whatever the
    /// file options: the journal's entries are), then empties the journal. A crash in between
    /// leaves entries that, applied again, change nothing.
    func fold() async throws {
        try await write(journal.unfolded)
        try await journal.synchronize(folder.appending(path: Self.settingsName).path(percentEncoded: false))
        try await journal.empty()
    }

    /// Writes `changes` into the settings file, in one durable commit.
    private func write(_ changes: Changes) async throws {
        guard !changes.isEmpty else { return }
        try await settings.batch { batch in
            if let meta = changes.meta {
                try batch.set(Self.text(of: meta, name: Self.metaKey), for: Self.metaKey)
            }
            for (key, record) in changes.records {
                let name = Self.recordPrefix + key
                if let record {
                    try batch.set(Self.text(of: record, name: name), for: name)
                } else {
                    batch.remove(name)
                }
            }
            if let archive = changes.archive {
                try batch.set(Self.text(of: archive, name: Self.archiveKey), for: Self.archiveKey)
            }
            if let rejected = changes.rejected {
                try batch.set(Self.text(of: rejected, name: Self.rejectedKey), for: Self.rejectedKey)
            }
        }
    }

    /// Entries to commit together.
    struct Changes {
        var meta: ReplicaMeta?
        var records: [String: LocalRecord?] = [:]
        var archive: [SyncConflict]?
        var rejected: [SyncConflict]?

        /// Takes `later`'s entries over these.
        mutating func merge(_ later: Changes) {
            meta = later.meta ?? meta
            records.merge(later.records) { _, later in later }
            archive = later.archive ?? archive
            rejected = later.rejected ?? rejected
        }

        var isEmpty: Bool { meta == nil && records.isEmpty && archive == nil && rejected == nil }
    }
}

// The journal's entries: a commit's changes, as JSON.
extension ReplicaFiles.Changes: Codable {
    // Removals are written as a list of keys: a JSON `null` in a dictionary of optionals
    // would not say whether the key is removed or absent.
    private enum CodingKeys: String, CodingKey {
        case meta, set, removed, archive, rejected
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        meta = try container.decodeIfPresent(ReplicaMeta.self, forKey: .meta)
        for (key, record) in try container.decode([String: LocalRecord].self, forKey: .set) {
            records[key] = record
        }
        for key in try container.decode([String].self, forKey: .removed) {
            records[key] = .some(nil)
        }
        archive = try container.decodeIfPresent([SyncConflict].self, forKey: .archive)
        rejected = try container.decodeIfPresent([SyncConflict].self, forKey: .rejected)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(meta, forKey: .meta)
        try container.encode(records.compactMapValues { $0 }, forKey: .set)
        try container.encode(records.filter { $0.value == nil }.map(\.key), forKey: .removed)
        try container.encodeIfPresent(archive, forKey: .archive)
        try container.encodeIfPresent(rejected, forKey: .rejected)
    }
}
