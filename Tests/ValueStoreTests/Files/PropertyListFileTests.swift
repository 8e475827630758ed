import Foundation
import Testing
import ValueStore
import ValueStoreTesting

@Suite struct PropertyListFileTests {
    @Test func obeysTheLaws() async throws {
        try await TemporaryDirectory.with { directory in
            let binary = ValueStore<Void, Settings>.plistFile(directory.appending(path: "a.plist"))
            try await ValueStoreLaws.check(binary, samples: .standard, .custom)
            let xml = ValueStore<Void, Settings>.plistFile(directory.appending(path: "b.plist"), format: .xml)
            try await ValueStoreLaws.check(xml, samples: .standard, .custom)
        }
    }

    @Test func writesBinaryByDefaultAndXMLOnRequest() async throws {
        try await TemporaryDirectory.with { directory in
            let binary = directory.appending(path: "binary.plist")
            let xml = directory.appending(path: "xml.plist")
            try await ValueStore<Void, Settings>.plistFile(binary).save(.custom)
            try await ValueStore<Void, Settings>.plistFile(xml, format: .xml).save(.custom)
            #expect(try binary.bytes().starts(with: Data("bplist00".utf8)))
            #expect(String(decoding: try xml.bytes(), as: UTF8.self).contains("<key>theme</key>"))
            for url in [binary, xml] {
                let object = try PropertyListSerialization.propertyList(from: url.bytes(), format: nil)
                #expect((object as? [String: Any])?["fontSize"] as? Int == 18)
            }
        }
    }

    @Test func readsEitherFormat() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try await ValueStore<Void, Settings>.plistFile(url, format: .xml).save(.custom)
            #expect(try await ValueStore<Void, Settings>.plistFile(url).load() == .custom)
        }
    }

    @Test(arguments: [
        (Data(), ValueStoreError.Code.corrupted),
        (Data("bplist00".utf8) + Data([0xD1, 0x01, 0x02]), .corrupted),
        // A bare word is a well-formed old-style property list: a string, not a dictionary.
        (Data("bplist00".utf8), .decodingFailed),
        (Data("<?xml version=\"1.0\"?><plist><dict><key>theme</key>".utf8), .corrupted),
        (
            Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><array><integer>1</integer></array></plist>".utf8),
            .decodingFailed
        ),
    ])
    func badContentIsReportedAndKept(content: Data, code: ValueStoreError.Code) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            try content.write(to: url)
            let store = ValueStore<Void, Settings>.plistFile(url).default(.standard)
            let error = await #expect(throws: ValueStoreError.self) { try await store.load() }
            #expect(error?.code == code)
            #expect(error?.store == "file '\(url.path(percentEncoded: false))'")
            #expect(try url.bytes() == content)
        }
    }
}
