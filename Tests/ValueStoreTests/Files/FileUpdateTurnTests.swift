import Foundation
import Testing

@testable import ValueStore

/// An update ends within a bound when its body awaits a write of the same file from a task that
/// does not inherit the update, and is not starved by this process's own saves.
@Suite struct FileUpdateTurnTests {
    // MARK: - A body that awaits a detached write of its own file

    @Test func anUpdateAwaitingADetachedSaveOfTheSameFileEnds() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json")).default(0)
            try await store.save(1)
            let outcome = await unlessItHangs(timeout: .seconds(60)) {
                try await store.update { value in
                    _ = try await Task.detached { try await store.save(5) }.value  // a new stamp each time
                    value += 1
                }
            }
            let error = try #require(outcome, "the update ended").failure
            #expect(error as? ValueStoreError == .nestedWrite)
        }
    }

    @Test func anUpdateAwaitingADetachedUpdateOfTheSameFileEnds() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Int>.jsonFile(directory.appending(path: "count.json")).default(0)
            let outcome = await unlessItHangs(timeout: .seconds(60)) {
                try await store.update { value in
                    _ = try await Task.detached { try await store.update { $0 += 10 } }.value
                    value += 1
                }
            }
            let error = try #require(outcome, "the update ended").failure
            #expect(error as? ValueStoreError == .nestedWrite)
        }
    }

    // MARK: - Not starved by this process's saves

    @Test func anUpdateIsNotStarvedByBackToBackSavesOfTheSameProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            try await BackToBackSaver.expectAnUpdateNotStarved(in: .jsonFile(url, options: .cache))
        }
    }
}
