import Foundation
import Testing
import ValueStore
import ValueStoreTesting

@Suite struct JSONFileTests {
    @Test func obeysTheLaws() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Settings>.jsonFile(directory.appending(path: "settings.json"))
            try await ValueStoreLaws.check(store, samples: .standard, .custom)
        }
    }

    @Test func writesOrdinaryJSON() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            try await ValueStore<Void, Settings>.jsonFile(url).save(.custom)
            let object = try JSONSerialization.jsonObject(with: url.bytes()) as? [String: Any]
            #expect(object?["theme"] as? String == "dark")
            #expect(object?["fontSize"] as? Int == 18)
        }
    }

    @Test func usesTheGivenEncoder() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try await ValueStore<Void, Settings>.jsonFile(url, encoder: encoder).save(.standard)
            #expect(String(decoding: try url.bytes(), as: UTF8.self).hasPrefix("{\n  \"fontSize\" : 14"))
        }
    }

    @Test(arguments: [
        ("", ValueStoreError.Code.corrupted, "empty"),
        ("{\"theme\":\"dark\",\"fontSi", .corrupted, "not valid JSON"),
        ("[1, 2, 3]", .decodingFailed, "expected"),
        ("{\"theme\":\"dark\"}", .decodingFailed, "missing key 'fontSize'"),
        ("{\"theme\":5,\"fontSize\":1,\"recent\":[]}", .decodingFailed, "theme"),
    ])
    func badContentIsReportedAndKept(content: String, code: ValueStoreError.Code, reason: String) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.json")
            try Data(content.utf8).write(to: url)
            let store = ValueStore<Void, Settings>.jsonFile(url).default(.standard)
            let error = await #expect(throws: ValueStoreError.self) { try await store.load() }
            #expect(error?.code == code)
            #expect(error?.store == "file '\(url.path(percentEncoded: false))'")
            #expect(error?.reason?.contains(reason) == true, "\(String(describing: error))")
            await #expect(throws: ValueStoreError(code)) { try await store.update { $0.fontSize += 1 } }
            #expect(try url.bytes() == Data(content.utf8), "the bad bytes stay untouched")
        }
    }

    @Test func updateThroughDefaultIsAtomic() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json")).default(0)
            try await concurrently(300) { _ in try await store.update { $0 += 1 } }
            #expect(try await store.load() == 300)
        }
    }
}
