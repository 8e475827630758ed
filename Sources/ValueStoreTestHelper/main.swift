// A helper process for the reliability tests: it writes to stores until it is killed, or updates
// a shared counter, so the tests can check what survives a SIGKILL and what concurrent processes
// do to one file.
//
//     ValueStoreTestHelper write-loop KIND PATH [KEY] saves growing payloads until killed,
//                                                     printing each sequence number once saved;
//                                                     KIND "encrypted" reads its key from KEY
//     ValueStoreTestHelper increment MODE PATH COUNT  updates a counter COUNT times
//     ValueStoreTestHelper settings-write-loop PATH   commits batches of growing payloads to a
//                                                     settings file until killed, printing each
//                                                     sequence number once durable
//     ValueStoreTestHelper settings-increment PATH KEY COUNT  updates one key of a settings file
//     ValueStoreTestHelper stalled-migration OLD NEW  loads NEW.replacing(OLD), pausing right after
//                                                     its first read of OLD: prints "read", waits
//                                                     for a line on standard input, then prints
//                                                     what the load returned or "notFound"
//     ValueStoreTestHelper old-app PATH               plays an app that reads `OldAppNote` up to
//                                                     schema 2: tries load, save, update and
//                                                     remove, printing "OPERATION ok" or
//                                                     "OPERATION CODE" for each
//     ValueStoreTestHelper old-app-save-loop PATH COUNT
//                                                     saves an `OldAppNote` up to COUNT times,
//                                                     printing "saving" once its first save
//                                                     returned, then "refused after N" once a
//                                                     save throws `newerVersion`, or "saved N"
//     ValueStoreTestHelper save-json PATH NUMBER      saves NUMBER as a JSON file, or removes
//                                                     the file when NUMBER is "remove"
//     ValueStoreTestHelper userdefaults-unwritable SUITE
//                                                     saves 1 to a key of SUITE, puts a directory
//                                                     where Foundation writes the suite's file,
//                                                     saves 2, then prints "save ok" or
//                                                     "save CODE" and "load VALUE"; run it with
//                                                     XDG_CONFIG_HOME set to a temporary directory
//     ValueStoreTestHelper move-each-line FROM TO     for each line on standard input, moves
//                                                     FROM's JSON number to TO and prints it,
//                                                     or "notFound"
//     ValueStoreTestHelper postgres MODE …            see Postgres.swift (PostgreSQL trait)
//     ValueStoreTestHelper sync-save-loop DIRECTORY   see Sync.swift
//     ValueStoreTestHelper sync-read DIRECTORY ACCOUNT KEY…  see Sync.swift
//     ValueStoreTestHelper sync-share-loop DIRECTORY NAME FROM TO  see Sync.swift
//     ValueStoreTestHelper sync-acknowledge-and-wait DIRECTORY URL  see Sync.swift
//     ValueStoreTestHelper sync-pokes URL ACCOUNT TOKEN       see Sync.swift
//     ValueStoreTestHelper sync-device NAME …         see SyncDevice.swift (PostgreSQL trait)

import Foundation
import Synchronization
import ValueStore

/// What the crash tests write: a sequence number, a filler that grows with it, and a checksum of
/// both, so a reader can tell a complete value from a torn one.
struct CrashPayload: Codable, Sendable {
    var sequence: Int
    var filler: String
    var checksum: UInt64

    init(sequence: Int) {
        self.sequence = sequence
        let length = min(1_000 + sequence * 12_000, 1_500_000)
        let letter = Character(UnicodeScalar(UInt8(97 + sequence % 26)))
        filler = String(repeating: letter, count: length)
        checksum = Self.checksum(sequence: sequence, filler: filler)
    }

    static func checksum(sequence: Int, filler: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(sequence):\(filler.count):\(filler.prefix(1))".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }
}

/// A counter kept in a struct, since property lists need a container at the top.
struct Counter: Codable, Sendable {
    var value: Int
}

func writeLoop(kind: String, url: URL, keyFile: URL?) async throws -> Never {
    let store: ValueStore<Void, CrashPayload>
    switch kind {
    case "json": store = .jsonFile(url)
    case "plist": store = .plistFile(url)
    case "raw": store = ValueStore<Void, Data>.file(url).coded(.json)
    case "encrypted": store = .encryptedFile(url, key: try await EncryptionKey.loadOrCreate(at: keyFile!))
    default: fatalError("unknown kind \(kind)")
    }
    var sequence = try await store.optional().load()?.sequence ?? 0
    while true {
        sequence += 1
        try await store.save(CrashPayload(sequence: sequence))
        FileHandle.standardOutput.write(Data("\(sequence)\n".utf8))
    }
}

/// Saves bursts of 20 concurrent saves of one value each to a JSON file until killed, printing a
/// burst's number once all its saves returned: they share commits (`CommitQueue`), and a kill
/// mid-burst must never leave the file older than the last burst printed.
func burstLoop(url: URL) async throws -> Never {
    let store = ValueStore<Void, CrashPayload>.jsonFile(url)
    var burst = try await store.optional().load()?.sequence ?? 0
    while true {
        burst += 1
        let payload = CrashPayload(sequence: burst)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { try await store.save(payload) }
            }
            try await group.waitForAll()
        }
        FileHandle.standardOutput.write(Data("\(burst)\n".utf8))
    }
}

func increment(mode: String, url: URL, count: Int) async throws {
    switch mode {
    case "json-default":
        let store = ValueStore<Void, Int>.jsonFile(url).default(0)
        for _ in 0..<count { try await store.update { $0 += 1 } }
    case "plist-optional":
        let store = ValueStore<Void, Counter>.plistFile(url).optional()
        for _ in 0..<count { try await store.update { $0 = Counter(value: ($0?.value ?? 0) + 1) } }
    case "raw-map":
        let store = ValueStore<Void, Data>.file(url)
            .map(load: { Int(String(decoding: $0, as: UTF8.self))! }, save: { Data(String($0).utf8) })
            .default(0)
        for _ in 0..<count { try await store.update { $0 += 1 } }
    default:
        fatalError("unknown mode \(mode)")
    }
}

/// Commits batches to a settings file until killed: a sequence number, and a payload that grows
/// with it, under two keys, so a reader can tell whether a batch arrived whole.
func settingsWriteLoop(url: URL) async throws -> Never {
    let settings = SettingsFile(url)
    var sequence = try await settings.store("sequence", as: Int.self).optional().load() ?? 0
    while true {
        sequence += 1
        let payload = CrashPayload(sequence: sequence)
        try await settings.batch { batch in
            try batch.set(sequence, for: "sequence")
            try batch.set(payload, for: "payload")
        }
        FileHandle.standardOutput.write(Data("\(sequence)\n".utf8))
    }
}

/// Adds one to a key of a settings file `count` times.
func settingsIncrement(url: URL, key: String, count: Int) async throws {
    let counter = SettingsFile(url).store(key, as: Int.self).default(0)
    for _ in 0..<count {
        try await counter.update { $0 += 1 }
    }
}

/// Loads through `replacing` with a migration that stalls after reading the old store, until the
/// test has changed the stores from its own process.
func stalledMigration(old oldURL: URL, new newURL: URL) async throws {
    let plain = ValueStore<Void, Int>.jsonFile(oldURL)
    let reads = Mutex(0)
    var old = plain
    old.load = { environment in
        let value = try await plain.load(environment)
        if reads.withLock({ count in
            count += 1
            return count == 1
        }) {
            FileHandle.standardOutput.write(Data("read\n".utf8))
            _ = await waitForALine()
        }
        return value
    }
    let store = ValueStore<Void, Int>.jsonFile(newURL).replacing(old)
    do {
        print(try await store.load())
    } catch ValueStoreError.notFound {
        print("notFound")
    }
}

/// Blocks a thread of the global executor, not the caller's, until standard input has a line.
@concurrent func waitForALine() async -> String? {
    readLine()
}

/// The first version of the note the versioning tests store.
struct OldAppNoteV1: VersionedValue {
    static let version = 1
    var text: String
}

/// The latest version of the note that the "old app" knows: schema 2.
struct OldAppNote: VersionedValue, Equatable {
    static let version = 2
    var title: String
    var body: String
}

// In an extension, so the memberwise initializer stays.
extension OldAppNote {
    init(migrating old: OldAppNoteV1) {
        self.init(title: old.text, body: "")
    }
}

func oldApp(url: URL) async {
    let store = ValueStore<Void, Data>.file(url).versioned(OldAppNote.self)
    let operations: [(String, () async throws -> Void)] = [
        ("load", { _ = try await store.load() }),
        ("save", { try await store.save(OldAppNote(title: "old", body: "app")) }),
        ("update", { try await store.update { $0.title = "old" } }),
        ("remove", { try await store.remove() }),
    ]
    for (name, operation) in operations {
        do {
            try await operation()
            print("\(name) ok")
        } catch let error as ValueStoreError {
            print("\(name) \(error.code)")
        } catch {
            print("\(name) \(error)")
        }
    }
}

func oldAppSaveLoop(url: URL, count: Int) async throws {
    let store = ValueStore<Void, Data>.file(url).versioned(OldAppNote.self)
    for index in 0..<count {
        do {
            try await store.save(OldAppNote(title: "old", body: "save \(index)"))
            if index == 0 {
                FileHandle.standardOutput.write(Data("saving\n".utf8))
            }
        } catch ValueStoreError.newerVersion {
            print("refused after \(index)")
            return
        }
    }
    print("saved \(count)")
}

/// Saves to a UserDefaults key whose suite file cannot be written. It runs in a process of its
/// own: once one suite's file cannot be written, Foundation on Linux fails the `synchronize()` of
/// every suite in the process.
func userDefaultsUnwritable(suite: String) async throws {
    guard let configuration = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] else {
        fatalError("XDG_CONFIG_HOME must name a temporary directory")
    }
    let file = URL(fileURLWithPath: configuration).appending(path: "\(suite).plist")
    let count = ValueStore<Void, Int>.userDefaults("count", suiteName: suite)
    try await count.save(1)
    try FileManager.default.removeItem(at: file)
    try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
    do {
        try await count.save(2)
        print("save ok")
    } catch let error as ValueStoreError {
        print("save \(error.code)")
    }
    print("load \(try await count.load())")
}

/// Moves the number in `from` to `to` each time standard input has a line, printing what moved.
func moveOnEachLine(from: URL, to: URL) async throws {
    let source = ValueStore<Void, Int>.jsonFile(from)
    let target = ValueStore<Void, Int>.jsonFile(to)
    while await waitForALine() != nil {
        let reply: String
        do {
            reply = String(try await source.move(to: target))
        } catch ValueStoreError.notFound {
            reply = "notFound"
        }
        FileHandle.standardOutput.write(Data("\(reply)\n".utf8))
    }
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "write-loop" where arguments.count == 4 || arguments.count == 5:
    try await writeLoop(
        kind: arguments[2],
        url: URL(fileURLWithPath: arguments[3]),
        keyFile: arguments.count == 5 ? URL(fileURLWithPath: arguments[4]) : nil
    )
case "burst-loop" where arguments.count == 3:
    try await burstLoop(url: URL(fileURLWithPath: arguments[2]))
case "old-app" where arguments.count == 3:
    await oldApp(url: URL(fileURLWithPath: arguments[2]))
case "old-app-save-loop" where arguments.count == 4:
    try await oldAppSaveLoop(url: URL(fileURLWithPath: arguments[2]), count: Int(arguments[3])!)
case "increment" where arguments.count == 5:
    try await increment(mode: arguments[2], url: URL(fileURLWithPath: arguments[3]), count: Int(arguments[4])!)
case "settings-write-loop" where arguments.count == 3:
    try await settingsWriteLoop(url: URL(fileURLWithPath: arguments[2]))
case "settings-increment" where arguments.count == 5:
    try await settingsIncrement(url: URL(fileURLWithPath: arguments[2]), key: arguments[3], count: Int(arguments[4])!)
case "stalled-migration" where arguments.count == 4:
    try await stalledMigration(old: URL(fileURLWithPath: arguments[2]), new: URL(fileURLWithPath: arguments[3]))
case "move-each-line" where arguments.count == 4:
    try await moveOnEachLine(from: URL(fileURLWithPath: arguments[2]), to: URL(fileURLWithPath: arguments[3]))
case "postgres" where arguments.count >= 4:
    // Postgres.swift; compiled only with the PostgreSQL trait.
    try await postgres(Array(arguments.dropFirst(2)))
case "save-json" where arguments.count == 4:
    let store = ValueStore<Void, Int>.jsonFile(URL(fileURLWithPath: arguments[2]))
    if let number = Int(arguments[3]) {
        try await store.save(number)
    } else {
        try await store.remove()
    }
case "sync-save-loop" where arguments.count == 3:
    try await syncSaveLoop(directory: URL(fileURLWithPath: arguments[2]))
case "sync-share-loop" where arguments.count == 6:
    guard let from = Int(arguments[4]), let to = Int(arguments[5]), from <= to else { exit(64) }
    try await syncShareLoop(directory: URL(fileURLWithPath: arguments[2]), name: arguments[3], range: from..<to)
case "sync-acknowledge-and-wait" where arguments.count == 4:
    guard let url = URL(string: arguments[3]) else { exit(64) }
    try await syncAcknowledgeAndWait(directory: URL(fileURLWithPath: arguments[2]), url: url)
case "sync-pokes" where arguments.count == 5:
    guard let url = URL(string: arguments[2]) else { exit(64) }
    await syncPokes(url: url, account: arguments[3], token: arguments[4])
case "sync-read" where arguments.count >= 5:
    try await syncRead(
        directory: URL(fileURLWithPath: arguments[2]), account: arguments[3], keys: Array(arguments.dropFirst(4)))
case "sync-device" where arguments.count >= 3:
    // SyncDevice.swift; compiled only with the PostgreSQL trait.
    try await syncDevice(Array(arguments.dropFirst(2)))
case "userdefaults-unwritable" where arguments.count == 3:
    try await userDefaultsUnwritable(suite: arguments[2])
default:
    FileHandle.standardError.write(
        Data(
            ("usage: ValueStoreTestHelper write-loop KIND PATH [KEY] | increment MODE PATH COUNT"
                + " | old-app PATH | old-app-save-loop PATH COUNT | settings-write-loop PATH"
                + " | settings-increment PATH KEY COUNT | stalled-migration OLD NEW | save-json PATH NUMBER"
                + " | userdefaults-unwritable SUITE | move-each-line FROM TO | sync-save-loop DIRECTORY"
                + " | sync-acknowledge-and-wait DIRECTORY URL | sync-read DIRECTORY ACCOUNT KEY… | sync-share-loop DIRECTORY NAME FROM TO | sync-pokes URL ACCOUNT TOKEN | postgres MODE … | sync-device NAME DIRECTORY ACCOUNT (HOST PORT TABLE | --http URL --tokens DIRECTORY)\n")
                .utf8))
    exit(64)
}
