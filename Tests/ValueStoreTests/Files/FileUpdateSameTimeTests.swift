import Foundation
import Testing

@testable import ValueStore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file `update` never commits over bytes that differ from those its body started from, even
/// when another program wrote them in place without moving the file's time: a coarse clock, or a
/// tool that puts the time back as `touch -r` does.
@Suite struct FileUpdateSameTimeTests {
    /// Overwrites the file's bytes in place, as an editor or a sync tool may: same inode, same size.
    static func writeInPlace(_ text: String, at url: URL) throws {
        let descriptor = open(url.path, O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        #expect(pwrite(descriptor, bytes, bytes.count, 0) == bytes.count)
    }

    /// The file's access and modification times, as `utimensat` takes them.
    static func times(of url: URL) -> [timespec] {
        var status = stat()
        _ = stat(url.path, &status)
        #if canImport(Darwin)
        return [status.st_atimespec, status.st_mtimespec]
        #else
        return [status.st_atim, status.st_mtim]
        #endif
    }

    @Test func anInPlaceWriteWhoseTimeWasPutBackMakesTheBodyRunAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            let store = ValueStore<Void, Int>.jsonFile(url)
            try await store.save(10)
            let runs = Calls()
            let result = try await store.update { (value: inout Int) in
                runs.increment()
                if runs.value == 1 {
                    let before = Self.times(of: url)
                    try Self.writeInPlace("70", at: url)  // same size, other bytes
                    #expect(utimensat(AT_FDCWD, url.path, before, 0) == 0)  // `touch -r`
                }
                value += 1
            }
            #expect(result == 71, "the update committed over the in-place write it never read")
            #expect(try await store.load() == 71)
            #expect(runs.value == 2)
        }
    }

    @Test func anInPlaceWriteWithinOneTickOfACoarseClockMakesTheBodyRunAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.json")
            // A file system whose clock never moves: every write leaves the same time.
            var coarse = FileSystem.live
            let live = FileSystem.live
            coarse.status = { descriptor in
                var status = try live.status(descriptor)
                status.modified = 0
                return status
            }
            coarse.pathStatus = { path in
                var status = try live.pathStatus(path)
                status.modified = 0
                return status
            }
            let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: coarse)
                .coded(Codec<Int, Data>.json)
            try await store.save(10)
            let runs = Calls()
            let result = try await store.update { (value: inout Int) in
                runs.increment()
                if runs.value == 1 {
                    try Self.writeInPlace("70", at: url)
                }
                value += 1
            }
            #expect(result == 71, "the update committed over the in-place write it never read")
            #expect(try await store.load() == 71)
        }
    }
}
