import Foundation
import Testing

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Transactions that end, exact values, and streams that wake only for their own key.
@Suite struct SettingsFileHardeningTests {
    // MARK: - A transaction ends when it commits

    @Test func aWriteFromATaskThatOutlivesAnUpdateCommitsOnItsOwn() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let settings = SettingsFile(url)
            let launches = settings.store("launches", as: Int.self).default(0)
            let note = settings.store("note", as: String.self)
            let (committed, commit) = AsyncStream<Void>.makeStream()
            let late = Shared<Task<Void, any Error>?>(nil)
            try await launches.update { count in
                count += 1
                late.value = Task {
                    for await _ in committed { break }  // after the update returned
                    try await note.save("written late")
                }
            }
            commit.yield()
            try await #require(late.value).value
            #expect(try await SettingsFile(url).store("note", as: String.self).load() == "written late")
            #expect(try await SettingsFile(url).store("launches", as: Int.self).load() == 1)
        }
    }

    @Test func aStreamStartedInsideAnUpdateSeesTheFilesOwnCommits() async throws {
        try await TemporaryDirectory.with { directory in
            let settings = SettingsFile(directory.appending(path: "settings.plist"))
            let launches = settings.store("launches", as: Int.self).default(0)
            let theme = settings.store("theme", as: String.self)
            let log = Shared<StateLog<String>?>(nil)
            try await launches.update { count in
                count += 1
                log.value = StateLog(theme.changes())
            }
            let states = try #require(log.value)
            #expect(await states.waitForLast("absent"))
            try await theme.save("dark")
            #expect(await states.waitForLast("dark"))
        }
    }
}

extension SettingsFileHardeningTests {
    /// Whether `stream` holds a signal now, without waiting for one: a cancelled iteration gets
    /// a buffered element, or `nil` at once.
    static func hasSignal(_ stream: AsyncStream<Void>) async -> Bool {
        await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = stream.makeAsyncIterator()
            return await iterator.next() != nil
        }.value
    }
}
