import Foundation
import Testing

@testable import ValueStore

/// An update of a settings key ends within a bound when its body awaits a write of the same key
/// from a task that does not inherit the update, and is not starved by this process's saves.
@Suite struct SettingsFileTurnTests {
    @Test func anUpdateAwaitingADetachedUpdateOfTheSameSettingsKeyEnds() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let counter = SettingsFile(url).store("counter", as: Int.self).default(0)
            let outcome = await unlessItHangs(timeout: .seconds(60)) {
                try await counter.update { value in
                    _ = try await Task.detached { try await counter.update { $0 += 10 } }.value
                    value += 1
                }
            }
            let error = try #require(outcome, "the update ended").failure
            #expect(error as? ValueStoreError == .nestedWrite)
            #expect(try await SettingsFile(url).store("counter", as: Int.self).optional().load() == nil)
        }
    }

    @Test func anUpdateAwaitingADetachedSaveOfTheSameSettingsKeyEnds() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let counter = SettingsFile(url).store("counter", as: Int.self).default(0)
            let saves = Calls()
            let outcome = await unlessItHangs(timeout: .seconds(60)) {
                try await counter.update { value in
                    saves.increment()
                    let saved = 100 + saves.value  // a new value each time, so each save changes the file
                    _ = try await Task.detached { try await counter.save(saved) }.value
                    value += 1
                }
            }
            let error = try #require(outcome, "the update ended").failure
            #expect(error as? ValueStoreError == .nestedWrite)
        }
    }

    @Test func updatesOfOneKeyWithSlowerBodiesStillTakeTurns() async throws {
        try await TemporaryDirectory.with { directory in
            let settings = SettingsFile(directory.appending(path: "settings.plist"), options: .cache)
            let counter = settings.store("counter", as: Int.self).default(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<10 {
                            try await counter.update { value in
                                await Task.yield()  // a body that suspends, letting the others run
                                value += 1
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await counter.load() == 40)
        }
    }

    @Test func anUpdateIsNotStarvedByBackToBackSavesOfTheSameProcess() async throws {
        try await TemporaryDirectory.with { directory in
            let settings = SettingsFile(directory.appending(path: "settings.plist"), options: .cache)
            try await BackToBackSaver.expectAnUpdateNotStarved(in: settings.store("counter", as: Int.self))
        }
    }
}
