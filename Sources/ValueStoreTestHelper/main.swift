// A helper process for the reliability tests: it writes to stores until it is killed, or updates
// a shared counter, so the tests can check what survives a SIGKILL and what concurrent processes
// do to one file.
//
//     ValueStoreTestHelper write-loop KIND PATH [KEY] saves growing payloads until killed,
//                                                     printing each sequence number once saved;
//                                                     KIND "encrypted" reads its key from KEY
//     ValueStoreTestHelper increment MODE PATH COUNT  updates a counter COUNT times
//     ValueStoreTestHelper save-json PATH NUMBER      saves NUMBER as a JSON file, or removes
//                                                     the file when NUMBER is "remove"

import Foundation
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

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "write-loop" where arguments.count == 4 || arguments.count == 5:
    try await writeLoop(
        kind: arguments[2],
        url: URL(fileURLWithPath: arguments[3]),
        keyFile: arguments.count == 5 ? URL(fileURLWithPath: arguments[4]) : nil
    )
case "increment" where arguments.count == 5:
    try await increment(mode: arguments[2], url: URL(fileURLWithPath: arguments[3]), count: Int(arguments[4])!)
case "save-json" where arguments.count == 4:
    let store = ValueStore<Void, Int>.jsonFile(URL(fileURLWithPath: arguments[2]))
    if let number = Int(arguments[3]) {
        try await store.save(number)
    } else {
        try await store.remove()
    }
default:
    FileHandle.standardError.write(
        Data(
            "usage: ValueStoreTestHelper write-loop KIND PATH [KEY] | increment MODE PATH COUNT | save-json PATH NUMBER\n"
                .utf8))
    exit(64)
}
