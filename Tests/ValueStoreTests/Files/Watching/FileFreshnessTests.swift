import Foundation
import Testing

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// A degraded check (the directory not watched) sees every change to the file, a write in place
/// that puts size and modification time back included: it compares the change time too.
@Suite struct FileFreshnessTests {
    #if canImport(Glibc)
    /// Writes `bytes` over the start of the file at `url` in place, then puts its modification
    /// time back, as `touch -m -d` would, and waits until its change time differs from the one
    /// `before` saw (a file system's clock may tick coarsely), within a bound.
    static func writeInPlaceKeepingTheTime(_ bytes: Data, to url: URL) throws {
        let path = url.path(percentEncoded: false)
        var before = stat()
        #expect(stat(path, &before) == 0)
        let handle = try FileHandle(forWritingTo: url)
        try handle.write(contentsOf: bytes)
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        let deadline = ContinuousClock.now + .seconds(10)
        var after = stat()
        repeat {
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            #expect(stat(path, &after) == 0)
            if after.st_ctim.tv_sec != before.st_ctim.tv_sec || after.st_ctim.tv_nsec != before.st_ctim.tv_nsec {
                break
            }
            usleep(1_000)
        } while ContinuousClock.now < deadline
        #expect(after.st_size == before.st_size)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        #expect(after.st_ino == before.st_ino)
        #expect(after.st_ctim.tv_sec != before.st_ctim.tv_sec || after.st_ctim.tv_nsec != before.st_ctim.tv_nsec)
    }

    @Test func aCacheWithoutAWatchSeesAWriteInPlaceThatKeepsTheTime() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let watches = FakeWatches()
            watches.failWatches(under: directory, true)
            let cached = watches.jsonFile(url, as: Int.self).cached()
            try await cached.save(1)
            #expect(try await cached.load() == 1)
            #expect(try await cached.load() == 1, "a hit: the check saw the file as it is")
            try Self.writeInPlaceKeepingTheTime(Data("2".utf8), to: url)
            #expect(try await cached.load() == 2)
        }
    }

    @Test func aSettingsKeyWithoutAWatchSeesAWriteInPlaceThatKeepsTheTime() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "settings.plist")
            let watches = FakeWatches()
            watches.failWatches(under: directory, true)
            let theme = SettingsFile(url, options: .default, fileSystem: watches.fileSystem).store(
                "theme", as: String.self)
            try await theme.save("dark")
            #expect(try await theme.load() == "dark")
            #expect(try await theme.load() == "dark", "a warm key: the check saw the file as it is")
            let gray = BinaryPropertyList.data(of: [PropertyListKey("theme"): .string("gray")])
            #expect(gray.count == (try Data(contentsOf: url)).count, "the same size")
            try Self.writeInPlaceKeepingTheTime(gray, to: url)
            #expect(try await theme.load() == "gray")
        }
    }
    #endif
}
