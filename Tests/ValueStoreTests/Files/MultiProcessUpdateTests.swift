import Foundation
import Testing
import ValueStore

@testable import ValueStoreTestHelper

/// Several processes update one file at once; the advisory lock must make every update count.
@Suite struct MultiProcessUpdateTests {
    @Test(arguments: ["json-default", "plist-optional", "raw-map"])
    func processesNeverLoseAnUpdate(mode: String) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "counter")
            let processes = try (0..<4).map { _ in
                try HelperProcess("increment", mode, url.path(percentEncoded: false), "150")
            }
            for process in processes {
                #expect(process.wait() == 0)
            }
            let total: Int =
                switch mode {
                case "plist-optional": try await ValueStore<Void, Counter>.plistFile(url).load().value
                case "raw-map":
                    Int(String(decoding: try await ValueStore<Void, Data>.file(url).load(), as: UTF8.self)) ?? -1
                default: try await ValueStore<Void, Int>.jsonFile(url).load()
                }
            #expect(total == 600)
        }
    }

    @Test func processesAndTasksShareTheLock() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "counter.json")
            let processes = try (0..<2).map { _ in
                try HelperProcess("increment", "json-default", url.path(percentEncoded: false), "100")
            }
            let store = ValueStore<Void, Int>.jsonFile(url).default(0)
            try await concurrently(100) { _ in try await store.update { $0 += 1 } }
            for process in processes {
                #expect(process.wait() == 0)
            }
            #expect(try await store.load() == 300)
        }
    }
}
