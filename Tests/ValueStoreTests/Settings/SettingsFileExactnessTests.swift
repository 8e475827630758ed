import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

/// Keys kept byte for byte, values the library cannot represent kept as they are, and the
/// binary property lists it writes read back the same by Foundation.
@Suite struct SettingsFileExactnessTests {
    // MARK: - Keys byte for byte

    @Test func keysThatDifferOnlyInUnicodeNormalizationAreTwoKeys() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let composed = "caf\u{e9}"  // NFC
            let decomposed = "cafe\u{301}"  // NFD
            #expect(composed == decomposed, "Swift strings compare by canonical equivalence")
            let settings = SettingsFile(url)
            try await settings.store(composed, as: Int.self).save(1)
            try await settings.store(decomposed, as: Int.self).save(2)
            #expect(try await settings.store(composed, as: Int.self).load() == 1)
            #expect(try await settings.store(decomposed, as: Int.self).load() == 2)

            try await settings.store("theme", as: String.self).save("dark")  // another commit
            let reopened = SettingsFile(url)
            #expect(try await reopened.store(composed, as: Int.self).load() == 1, "each store reads its own key")
            #expect(try await reopened.store(decomposed, as: Int.self).load() == 2)
            let keys = try BinaryPropertyList.dictionary(from: Data(contentsOf: url)).keys.map(\.name)
            #expect(keys.filter { $0 == composed }.count == 2, "both survive a commit, byte for byte")
            #expect(
                Set(keys.map { Array($0.utf8) }) == [Array(composed.utf8), Array(decomposed.utf8), Array("theme".utf8)])
        }
    }

    @Test func aFileAnotherToolWroteWithBothFormsOfAKeyKeepsBoth() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            // Another tool's file, written by hand: both keys in UTF-16.
            let file = Self.bplist(
                top: 0,
                objects: [
                    [0xD2, 1, 2, 3, 4],
                    [0x64, 0, 0x63, 0, 0x61, 0, 0x66, 0, 0xE9],  // caf\u{e9}
                    [0x65, 0, 0x63, 0, 0x61, 0, 0x66, 0, 0x65, 0x03, 0x01],  // cafe\u{301}
                    [0x58] + Array("composed".utf8),
                    [0x5A] + Array("decomposed".utf8),
                ])
            try file.write(to: url)
            let settings = SettingsFile(url)
            try await settings.store("fontSize", as: Int.self).save(16)
            let reopened = SettingsFile(url)
            #expect(try await reopened.store("caf\u{e9}", as: String.self).load() == "composed")
            #expect(try await reopened.store("cafe\u{301}", as: String.self).load() == "decomposed")
        }
    }

    // MARK: - Values the library cannot represent

    /// A binary property list written by hand, as NSKeyedArchiver would leave under a key:
    /// `{"theme": "dark", "archived": {"$top": {"root": UID 1}, "$version": 100000}}`.
    static let fileWithAUID: Data = bplist(
        top: 0,
        objects: [
            [0xD2, 1, 2, 3, 4],  // 0: {theme: dark, archived: 4}
            [0x55] + Array("theme".utf8),  // 1
            [0x58] + Array("archived".utf8),  // 2
            [0x54] + Array("dark".utf8),  // 3
            [0xD2, 5, 6, 7, 8],  // 4: {$top: 7, $version: 8}
            [0x54] + Array("$top".utf8),  // 5
            [0x58] + Array("$version".utf8),  // 6
            [0xD1, 9, 10],  // 7: {root: 10}
            [0x12, 0x00, 0x01, 0x86, 0xA0],  // 8: 100000
            [0x54] + Array("root".utf8),  // 9
            [0x80, 0x01],  // 10: UID 1
        ])

    @Test func aUIDIsKeptAsItIsAndTheOtherKeysAreServed() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try Self.fileWithAUID.write(to: url)
            let settings = SettingsFile(url)
            #expect(try await settings.store("theme", as: String.self).load() == "dark")
            let error = await #expect(throws: ValueStoreError(.unsupportedFormat)) {
                try await settings.store("archived", as: [String: Int].self).load()
            }
            #expect(error?.store?.contains("key 'archived'") == true)
            #expect(error?.reason?.contains("UID") == true)

            try await settings.store("fontSize", as: Int.self).save(16)
            try await settings.store("theme", as: String.self).default("").update { $0 += "er" }
            let reopened = SettingsFile(url)
            #expect(try await reopened.store("theme", as: String.self).load() == "darker")
            #expect(try await reopened.store("fontSize", as: Int.self).load() == 16)
            await #expect(throws: ValueStoreError(.unsupportedFormat)) {
                try await reopened.store("archived", as: [String: Int].self).load()
            }
            let entries = try BinaryPropertyList.dictionary(from: Data(contentsOf: url))
            #expect(
                entries[PropertyListKey("archived")]
                    == .dictionary(["$top": .dictionary(["root": .uid(Data([0x01]))]), "$version": .integer(100_000)]),
                "the UID survives saves of other keys, byte for byte")
            // Foundation reads the file this library wrote, UID and all.
            #expect(throws: Never.self) {
                try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
            }
        }
    }

    // MARK: - A malformed binary file is corrupted, never a crash

    static let malformedFiles: [(String, Data)] = [
        ("truncated", Data(fileWithAUID.prefix(20))),
        ("a container that holds itself", bplist(top: 0, objects: [[0xD1, 1, 0], [0x51, 0x61]])),
        ("a reference past the objects", bplist(top: 0, objects: [[0xD1, 1, 9], [0x51, 0x61]])),
        ("a count past the file", bplist(top: 0, objects: [[0xDF, 0x13, 0x7F, 0, 0, 0, 0, 0, 0, 0]])),
        ("a string past the objects", bplist(top: 0, objects: [[0xD1, 1, 2], [0x5E, 0x61], [0x09]])),
        ("a top level that is an array", bplist(top: 0, objects: [[0xA1, 1], [0x09]])),
        ("a key that is not a string", bplist(top: 0, objects: [[0xD1, 1, 1], [0x10, 1]])),
        ("a set", bplist(top: 0, objects: [[0xD1, 1, 2], [0x51, 0x61], [0xC0]])),
        (
            "an integer of 16 bytes beyond 64 bits",
            bplist(top: 0, objects: [[0xD1, 1, 2], [0x51, 0x61], [0x14] + [UInt8](repeating: 1, count: 16)])
        ),
    ]

    @Test(arguments: malformedFiles.indices)
    func aMalformedBinaryFileIsCorruptedAndKept(index: Int) async throws {
        let (name, bytes) = Self.malformedFiles[index]
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try bytes.write(to: url)
            let settings = SettingsFile(url)
            await #expect(throws: ValueStoreError(.corrupted), "\(name)") {
                try await settings.store("a", as: Bool.self).load()
            }
            await #expect(throws: ValueStoreError(.corrupted), "\(name)") {
                try await settings.store("a", as: Bool.self).save(true)
            }
            #expect(try Data(contentsOf: url) == bytes, "\(name): the bytes stay as they are")
        }
    }

    @Test func anyByteOfABinaryFileChangedParsesOrIsCorrupted() throws {
        let seed = UInt64.random(in: .min ... .max)
        print("anyByteOfABinaryFileChangedParsesOrIsCorrupted seed: \(seed)")
        var random = SeededRandom(seed: seed)
        let original = [UInt8](Self.fileWithAUID)
        for _ in 0..<2_000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                _ = try BinaryPropertyList.dictionary(from: Data(bytes))
            } catch let error as ValueStoreError {
                // A changed byte inside a UTF-16 string can leave an unpaired surrogate, which the
                // reader refuses as unsupportedFormat, as documented (seed 13610434938110194924).
                #expect([.corrupted, .unsupportedFormat].contains(error.code), "seed \(seed)")
            }
        }
    }

    // MARK: - What the writer writes, Foundation reads

    @Test func foundationReadsWhatASettingsFileWrites() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let when = Date(timeIntervalSinceReferenceDate: 785_000_123.456_789)
            var values: [String: PropertyListNode] = [
                "short": .string("dark"), "long": .string(String(repeating: "x", count: 300)),
                "unicode": .string("caf\u{e9} \u{1F600}"), "empty": .string(""), "zero": .integer(0),
                "byte": .integer(255), "twoBytes": .integer(65_535), "fourBytes": .integer(4_294_967_295),
                "eightBytes": .integer(.max), "negative": .integer(-1), "minimum": .integer(.min),
                "unsigned": .unsignedInteger(.max), "real": .real(0.1 + 0.2), "yes": .boolean(true),
                "no": .boolean(false), "when": .date(when), "data": .data(Data(repeating: 7, count: 40)),
                "array": .array([.integer(1), .string("two"), .boolean(false), .array([])]),
                "nested": .dictionary(["inner": .dictionary(["deep": .real(1)]), "list": .array([.data(Data())])]),
            ]
            for index in 0..<300 {
                values["key\(index)"] = .integer(Int64(index))
            }
            let settings = SettingsFile(url)
            try await settings.batch { batch in
                for (key, value) in values {
                    try batch.set(FoundationValue(node: value), for: key)
                }
            }
            #expect(try SettingsFileTests.nodes(at: url) == values, "Foundation reads every value back the same")
        }
    }
}

extension SettingsFileExactnessTests {
    @Test func aLargeFileFoundationWroteReadsTheSame() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            // Wide offsets and references, and objects Foundation shares between keys.
            var entries: [String: Any] = [:]
            for index in 0..<3_000 {
                entries["key\(index)"] = index % 3 == 0 ? String(repeating: "\(index)", count: 40) : index % 7
            }
            let data = try PropertyListSerialization.data(fromPropertyList: entries, format: .binary, options: 0)
            try data.write(to: url)
            let read = try BinaryPropertyList.dictionary(from: data)
            #expect(read.count == 3_000)
            #expect(
                read
                    == SettingsFile.Entries(
                        uniqueKeysWithValues: try SettingsFileTests.nodes(at: url).map {
                            (PropertyListKey($0.key), $0.value)
                        }))
            #expect(try await SettingsFile(url).store("key2999", as: Int.self).load() == 2_999 % 7)
        }
    }

    /// A binary property list of `objects`, each given whole (marker and contents), with
    /// one-byte references and offsets.
    static func bplist(top: Int, objects: [[UInt8]]) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]
        for value in [objects.count, top, table] {
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        return Data(bytes)
    }

    /// Encodes as the node it holds, so a batch writes any node.
    struct FoundationValue: Encodable {
        let node: PropertyListNode

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch node {
            case .string(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .unsignedInteger(let value): try container.encode(value)
            case .real(let value): try container.encode(value)
            case .boolean(let value): try container.encode(value)
            case .date(let value): try container.encode(value)
            case .data(let value): try container.encode(value)
            case .array(let nodes): try container.encode(nodes.map(FoundationValue.init))
            case .dictionary(let nodes): try container.encode(nodes.mapValues(FoundationValue.init))
            case .uid: preconditionFailure("no Codable value is a UID")
            }
        }
    }
}
