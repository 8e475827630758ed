import Foundation
import Testing

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#endif

/// A watch follows the directory's inode, observers follow its path: once the path names another
/// directory (an ancestor renamed and made again, a symlink on the way pointed elsewhere), later
/// writes there reach every stream and cache, old and new.
@Suite struct WatchedPathTests {
    @Test func aGrandparentRenamedAndMadeAgainIsFollowed() async throws {
        try await TemporaryDirectory.with { directory in
            let grandparent = directory.appending(path: "g")
            let folder = grandparent.appending(path: "p")
            let url = folder.appending(path: "count.json")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileWatchHealthTests.writeAsAnotherProcess(1, to: url)
            let log = StateLog(ValueStore<Void, Int>.jsonFile(url).changes())
            #expect(await log.waitForLast("1"))
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            #expect(try await cached.load() == 1)
            // mv g g.old; mkdir -p g/p: the watch stays on g.old/p, which hears of nothing.
            try FileManager.default.moveItem(at: grandparent, to: directory.appending(path: "g.old"))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileWatchHealthTests.writeAsAnotherProcess(5, to: url)
            #expect(await log.waitForLast("5"))
            #expect(try await eventually { try await cached.load() == 5 })
            try await Self.expectLaterWritesArrive(at: url, log: log, cached: cached)
        }
    }

    @Test func aSymlinkPointedElsewhereIsFollowed() async throws {
        try await TemporaryDirectory.with { directory in
            let releases = directory.appending(path: "releases")
            for release in ["v1", "v2"] {
                try FileManager.default.createDirectory(
                    at: releases.appending(path: release), withIntermediateDirectories: true)
                try FileWatchHealthTests.writeAsAnotherProcess(
                    release == "v1" ? 1 : 2, to: releases.appending(path: "\(release)/count.json"))
            }
            let current = directory.appending(path: "current")
            try Self.pointSymlink(current, to: "releases/v1")
            let url = current.appending(path: "count.json")
            let log = StateLog(ValueStore<Void, Int>.jsonFile(url).changes())
            #expect(await log.waitForLast("1"))
            let cached = ValueStore<Void, Int>.jsonFile(url).cached()
            #expect(try await cached.load() == 1)
            // ln -sfn releases/v2 current, as a deploy script does: a new link renamed over it.
            try Self.pointSymlink(current, to: "releases/v2")
            #expect(await log.waitForLast("2"))
            #expect(try await eventually { try await cached.load() == 2 })
            try await Self.expectLaterWritesArrive(at: url, log: log, cached: cached)
        }
    }

    @Test func aSettingsKeyFollowsASymlinkPointedElsewhere() async throws {
        try await TemporaryDirectory.with { directory in
            for (release, theme) in [("v1", "light"), ("v2", "dark")] {
                let folder = directory.appending(path: "releases/\(release)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let written = try PropertyListSerialization.data(
                    fromPropertyList: ["theme": theme], format: .xml, options: 0)
                try written.write(to: folder.appending(path: "settings.plist"), options: .atomic)
            }
            let current = directory.appending(path: "current")
            try Self.pointSymlink(current, to: "releases/v1")
            let theme = SettingsFile(current.appending(path: "settings.plist")).store("theme", as: String.self)
            #expect(try await theme.load() == "light")
            try Self.pointSymlink(current, to: "releases/v2")
            #expect(try await eventually { try await theme.load() == "dark" })
        }
    }

    /// A write at `url` reaches the stream of `log`, the cache, and a stream started now.
    static func expectLaterWritesArrive(at url: URL, log: StateLog<Int>, cached: ValueStore<Void, Int>) async throws {
        let later = StateLog(ValueStore<Void, Int>.jsonFile(url).changes())
        try FileWatchHealthTests.writeAsAnotherProcess(6, to: url)
        #expect(await log.waitForLast("6"))
        #expect(await later.waitForLast("6"))
        #expect(try await eventually { try await cached.load() == 6 })
        try FileWatchHealthTests.writeAsAnotherProcess(7, to: url)
        #expect(await log.waitForLast("7"))
        #expect(await later.waitForLast("7"))
        #expect(try await eventually { try await cached.load() == 7 })
    }

    /// Points the symlink `link` at `target` the way `ln -sfn` does: a new link renamed over it.
    static func pointSymlink(_ link: URL, to target: String) throws {
        let path = link.path(percentEncoded: false)
        let temporary = path + ".new"
        #expect(symlink(target, temporary) == 0)
        #expect(rename(temporary, path) == 0)
    }
}
