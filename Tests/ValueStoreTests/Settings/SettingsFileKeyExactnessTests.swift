import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

/// Both formats keep keys byte for byte, top level and nested, or refuse the file and leave it as
/// it is: keys that differ only in Unicode normalization, and text holding an unpaired UTF-16
/// surrogate, are never merged nor repaired.
@Suite struct SettingsFileKeyExactnessTests {
    static let composed = "caf\u{e9}"  // NFC
    static let decomposed = "cafe\u{301}"  // NFD

    /// An XML property list written by hand: `body` inside the top-level dictionary.
    static func xml(_ body: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \(body)
            </dict>
            </plist>

            """.utf8)
    }

    @Test func anXMLFileWithBothFormsOfAKeyKeepsBothThroughACommit() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try Self.xml(
                """
                <key>\(Self.composed)</key><string>composed</string>
                <key>\(Self.decomposed)</key><string>decomposed</string>
                """
            ).write(to: url)
            let settings = SettingsFile(url)
            #expect(try await settings.store(Self.composed, as: String.self).load() == "composed")
            #expect(try await settings.store(Self.decomposed, as: String.self).load() == "decomposed")
            try await settings.store("fontSize", as: Int.self).save(16)

            let reopened = SettingsFile(url)
            #expect(try await reopened.store(Self.composed, as: String.self).load() == "composed")
            #expect(try await reopened.store(Self.decomposed, as: String.self).load() == "decomposed")
            let entries = try BinaryPropertyList.dictionary(from: Data(contentsOf: url))
            #expect(entries[PropertyListKey(Self.composed)] == .string("composed"), "byte for byte, after the commit")
            #expect(entries[PropertyListKey(Self.decomposed)] == .string("decomposed"))
            #expect(entries.count == 3)
        }
    }

    /// `{"theme": "dark", "prefs": {"café" (NFC): 1, "café" (NFD): 2}}`, in either format.
    static let nestedCollisions: [(String, Data)] = [
        (
            "xml",
            xml(
                """
                <key>theme</key><string>dark</string>
                <key>prefs</key>
                <dict>
                    <key>\(composed)</key><integer>1</integer>
                    <key>\(decomposed)</key><integer>2</integer>
                </dict>
                """)
        ),
        (
            "binary",
            SettingsFileExactnessTests.bplist(
                top: 0,
                objects: [
                    [0xD2, 1, 2, 3, 4],  // 0: {theme: dark, prefs: 4}
                    [0x55] + Array("theme".utf8),  // 1
                    [0x55] + Array("prefs".utf8),  // 2
                    [0x54] + Array("dark".utf8),  // 3
                    [0xD2, 5, 6, 7, 8],  // 4
                    [0x64, 0, 0x63, 0, 0x61, 0, 0x66, 0, 0xE9],  // 5: caf\u{e9}
                    [0x65, 0, 0x63, 0, 0x61, 0, 0x66, 0, 0x65, 0x03, 0x01],  // 6: cafe\u{301}
                    [0x10, 1],  // 7
                    [0x10, 2],  // 8
                ])
        ),
    ]

    @Test(arguments: nestedCollisions.indices)
    func aNestedDictionaryWithBothFormsOfAKeyIsRefusedAndKept(index: Int) async throws {
        let (format, bytes) = Self.nestedCollisions[index]
        try await Self.expectRefusedAndKept(bytes, because: "'prefs'", "\(format): never merged")
    }

    /// Opens a settings file holding `bytes`: a load and a save throw `unsupportedFormat` whose
    /// reason holds `reason`, and the file keeps its bytes.
    static func expectRefusedAndKept(_ bytes: Data, because reason: String, _ comment: Comment) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try bytes.write(to: url)
            let settings = SettingsFile(url)
            let error = await #expect(throws: ValueStoreError(.unsupportedFormat), comment) {
                try await settings.store("theme", as: String.self).load()
            }
            #expect(error?.reason?.contains(reason) == true, comment)
            await #expect(throws: ValueStoreError(.unsupportedFormat), comment) {
                try await settings.store("fontSize", as: Int.self).save(16)
            }
            #expect(try Data(contentsOf: url) == bytes, comment)
        }
    }

    /// Files holding a key or a string with an unpaired UTF-16 surrogate.
    static let unpairedSurrogates: [(String, Data)] = [
        (
            "binary keys 'a' + U+D800 and 'a' + U+DC00",
            SettingsFileExactnessTests.bplist(
                top: 0,
                objects: [
                    [0xD2, 1, 2, 3, 4],
                    [0x62, 0, 0x61, 0xD8, 0x00],  // a\u{D800}
                    [0x62, 0, 0x61, 0xDC, 0x00],  // a\u{DC00}
                    [0x53] + Array("one".utf8),
                    [0x53] + Array("two".utf8),
                ])
        ),
        (
            "a binary string ending in a lead surrogate",
            SettingsFileExactnessTests.bplist(
                top: 0,
                objects: [[0xD1, 1, 2], [0x55] + Array("theme".utf8), [0x62, 0, 0x61, 0xD8, 0x3D]])
        ),
        ("an XML key with &#xD800;", xml("<key>a&#xD800;</key><string>one</string>")),
        (
            "an XML string in UTF-8 of a surrogate",
            Data("<plist version=\"1.0\"><dict><key>theme</key><string>a".utf8) + Data([0xED, 0xA0, 0x80])
                + Data("</string></dict></plist>".utf8)
        ),
    ]

    @Test(arguments: unpairedSurrogates.indices)
    func anUnpairedSurrogateIsRefusedAndTheFileKept(index: Int) async throws {
        let (name, bytes) = Self.unpairedSurrogates[index]
        try await Self.expectRefusedAndKept(bytes, because: "surrogate", "\(name): never repaired")
    }

    // MARK: - Every XML file Foundation reads, read the same

    @Test func anXMLFileFoundationWroteReadsAsFoundationReadsIt() throws {
        let entries: [String: Any] = [
            "short": "dark", "escaped": "<a href=\"x\">&'</a>]]>", "unicode": "caf\u{e9} \u{1F600}", "empty": "",
            "spaces": "  two\n lines\t", "crlf": "a\r\nb\rc", "<&key>": "x", "zero": 0, "negative": -42,
            "minimum": Int64.min, "maximum": Int64.max,
            "unsigned": UInt64.max, "real": 0.1 + 0.2, "whole": 2.0, "tiny": Double.leastNonzeroMagnitude, "yes": true,
            "no": false,
            "when": Date(timeIntervalSinceReferenceDate: 785_000_123), "before": Date(timeIntervalSince1970: -86_401),
            "data": Data((0..<200).map { UInt8($0) }), "noData": Data(),
            "array": [1, "two", false, [Int](), [String: Int]()] as [Any],
            "nested": ["inner": ["deep": 1.5], "list": [Data([1])]] as [String: Any],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: entries, format: .xml, options: 0)
        guard case .dictionary(let expected) = try PropertyListNode.parse(data) else {
            Issue.record("Foundation reads no dictionary")
            return
        }
        let read = try XMLPropertyList.dictionary(from: data)
        #expect(read.count == expected.count)
        for (key, node) in expected {
            #expect(read[PropertyListKey(key)] == node, "\(key)")
        }
    }

    @Test func xmlWithCommentsCDATAAndReferencesReads() throws {
        let data = Data(
            """
            \u{FEFF}<?xml version="1.0" encoding="utf-8"?>
            <!-- written by hand -->
            <plist version="1.0"><dict>
              <key>a&amp;b</key> <!-- between --> <string>x<![CDATA[<&>]]>&#233;&#x1F600;<!-- inside --></string>
              <key>n</key><integer> 0x1F </integer>
              <key>e</key><string/>
              <key>t</key><true></true>
              <key>d</key><dict/>
            </dict></plist>
            """.utf8)
        let read = try XMLPropertyList.dictionary(from: data)
        #expect(read[PropertyListKey("a&b")] == .string("x<&>\u{e9}\u{1F600}"))
        #expect(read[PropertyListKey("n")] == .integer(31))
        #expect(read[PropertyListKey("e")] == .string(""))
        #expect(read[PropertyListKey("t")] == .boolean(true))
        #expect(read[PropertyListKey("d")] == .dictionary([:]))
    }

    static let malformedXML: [String] = [
        "<plist><dict><key>a</key></dict></plist>",
        "<plist><dict><key>a</key><string>x</dict></plist>",
        "<plist><array><string>x</string></array></plist>",
        "<plist><dict><key>a</key><integer>twelve</integer></dict></plist>",
        "<plist><dict><key>a</key><date>yesterday</date></dict></plist>",
        "<plist><dict><key>a</key><set/></dict></plist>",
        "<plist><dict><key>a</key><string>&bogus;</string></dict></plist>",
        "<plist><dict></dict></plist><dict/>",
        "<plist><dict><key>a</key><string>x</string>",
    ]

    @Test(arguments: malformedXML)
    func malformedXMLIsCorruptedAndKept(text: String) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try Data(text.utf8).write(to: url)
            let settings = SettingsFile(url)
            await #expect(throws: ValueStoreError(.corrupted)) {
                try await settings.store("a", as: String.self).save("y")
            }
            #expect(try Data(contentsOf: url) == Data(text.utf8))
        }
    }
}
