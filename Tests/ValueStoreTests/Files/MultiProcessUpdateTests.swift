import Foundation
import Testing
import ValueStore
import ValueStoreTestSupport

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
                #expect(await process.exitStatus() == 0)
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

    @Test func opposingMovesInTwoProcessesFinishAndLeaveOneValue() async throws {
        try await TemporaryDirectory.with { directory in
            let a = ValueStore<Void, Int>.jsonFile(directory.appending(path: "a.json"))
            let b = ValueStore<Void, Int>.jsonFile(directory.appending(path: "b.json"))
            let there = try HelperProcess(
                "move-each-line", directory.appending(path: "a.json").path(percentEncoded: false),
                directory.appending(path: "b.json").path(percentEncoded: false))
            let back = try HelperProcess(
                "move-each-line", directory.appending(path: "b.json").path(percentEncoded: false),
                directory.appending(path: "a.json").path(percentEncoded: false))
            for round in 0..<10 {
                try await a.save(round * 2)
                try await b.save(round * 2 + 1)
                try there.send("go")
                try back.send("go")
                // A round that never ends leaves its reads to the kills below, which close the pipes.
                let replies =
                    try await unlessItHangs { [there, back] in
                        [await there.nextLine(), await back.nextLine()]
                    }?.get() ?? [nil, nil]
                #expect(replies.allSatisfy { $0 != nil && $0 != "notFound" }, "round \(round): both moves finished")
                let left = [try await a.optional().load(), try await b.optional().load()].compactMap { $0 }
                #expect(left.count == 1, "round \(round): one file holds a value, the other none")
                #expect(left.allSatisfy { $0 / 2 == round }, "round \(round): one of the two values")
                if replies.contains(nil) { break }
            }
            there.kill()
            back.kill()
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
                #expect(await process.exitStatus() == 0)
            }
            #expect(try await store.load() == 300)
        }
    }
}
