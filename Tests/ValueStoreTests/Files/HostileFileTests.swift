import Foundation
import Testing

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What other programs, other stores and odd names leave at or next to a store's path.
@Suite struct HostileFileTests {
    // MARK: - Orphan cleanup

    @Test func orphanCleanupDeletesOnlyThisStoresTemporaryFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let others = [
                ".a.tmp-x.lock",  // the lock file of a store at "a.tmp-x"
                ".a.tmp-x.tmp-0123456789abcdef",  // that store's live temporary file
                ".a.tmp-notes",  // someone's notes
                ".a.tmp-0123456789abcdef0",  // one digit too many
                ".a.tmp-0123456789ABCDEF",  // not our digits
            ]
            let orphans = [".a.tmp-00000000deadbeef", ".a.tmp-beef"]  // this release's, and an older one's
            for name in others + orphans {
                try Data([1]).write(to: directory.appending(path: name))
            }
            try await ValueStore<Void, Data>.file(directory.appending(path: "a")).save(Data([2]))
            let left = try directory.contents()
            for name in others {
                #expect(left.contains(name), "\(name) belongs to someone else")
            }
            for name in orphans {
                #expect(!left.contains(name), "\(name) is an orphan of this store")
            }
        }
    }

    @Test(arguments: [true, false])
    func aLockFileReplacedWhileLockingIsLockedAgain(recreated: Bool) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            let lockPath = directory.appending(path: ".value.bin.lock").path(percentEncoded: false)
            let lockOpens = Calls()
            let locks = Calls()
            var fileSystem = FileSystem.live
            fileSystem.open = { path, flags, mode in
                if path == lockPath { lockOpens.increment() }
                return try FileSystem.live.open(path, flags, mode)
            }
            fileSystem.lock = { descriptor, wait in
                locks.increment()
                if locks.value == 1 {
                    // Another program deletes the lock file, and maybe makes a new one, just as
                    // this process locks the old one.
                    try FileSystem.live.unlink(lockPath)
                    if recreated {
                        _ = FileManager.default.createFile(atPath: lockPath, contents: nil)
                    }
                }
                return try FileSystem.live.lock(descriptor, wait)
            }
            let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
            try await store.save(Data([1]))
            #expect(lockOpens.value == 2, "the lock is taken again on the file now at the path")
            #expect(try await store.load() == Data([1]))
        }
    }

    // MARK: - Names

    @Test func aNameThatIsNotUTF8IsRefusedNeverCalledAbsent() async throws {
        try await TemporaryDirectory.with { directory in
            let bytes =
                Array(directory.path(percentEncoded: false).utf8) + Array("/caf".utf8) + [0xE9] + Array(".json".utf8)
            let descriptor = (bytes + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
            }
            #expect(descriptor >= 0)
            _ = "7".utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, 1) }
            close(descriptor)
            let url = try #require(URL(string: "file://\(directory.path(percentEncoded: true))/caf%E9.json"))
            let store = ValueStore<Void, Int>.jsonFile(url)
            await #expect(throws: ValueStoreError(.invalidConfiguration)) { try await store.load() }
            await #expect(throws: ValueStoreError(.invalidConfiguration)) { try await store.default(0).load() }
            await #expect(throws: ValueStoreError(.invalidConfiguration)) { try await store.save(8) }
            await #expect(throws: ValueStoreError(.invalidConfiguration)) { try await store.remove() }
            #expect(try directory.contents().count == 1, "no second file, no lock file")
        }
    }

    @Test(arguments: [234, 240, 250, 255])
    func everyNameTheFileSystemAcceptsCanBeSaved(length: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: String(repeating: "n", count: length))
            let store = ValueStore<Void, Int>.jsonFile(url)
            try await store.save(1)
            #expect(try await store.update { $0 += 1 } == 2)
            #expect(try await ValueStore<Void, Int>.jsonFile(url).load() == 2)
            try await store.remove()
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
            #expect(try directory.contents().allSatisfy { $0.utf8.count <= 255 })
        }
    }

    @Test func longNamesWithACommonStartGetTheirOwnLockFiles() {
        let start = String(repeating: "é", count: 115)  // 230 bytes: characters are never split
        let first = DurableFile.sidecarStem(for: start + "first-name")
        let second = DurableFile.sidecarStem(for: start + "other-name")
        #expect(first != second)
        #expect(first.utf8.count + ".".utf8.count + ".tmp-".utf8.count + 16 <= 255)
        #expect(DurableFile.sidecarStem(for: "settings.json") == "settings.json")
    }

    // MARK: - Things that are not regular files

    @Test func aFIFOAtThePathIsRefusedWithoutBlocking() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.json")
            #expect(mkfifo(url.path(percentEncoded: false), 0o644) == 0)
            let store = ValueStore<Void, Int>.jsonFile(url)
            let error = await #expect(throws: ValueStoreError(.io)) { try await store.load() }
            #expect(error?.reason?.contains("a FIFO, not a regular file") == true)
            await #expect(throws: ValueStoreError(.io)) { try await store.default(0).update { $0 += 1 } }
        }
    }

    @Test func aSymlinkToADeviceIsRefusedWithoutReadingIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            try FileManager.default.createSymbolicLink(
                atPath: url.path(percentEncoded: false), withDestinationPath: "/dev/zero")
            let error = await #expect(throws: ValueStoreError(.io)) {
                try await ValueStore<Void, Data>.file(url).load()
            }
            #expect(error?.reason?.contains("a character device") == true)
        }
    }

    @Test func aFIFOAtTheLockPathIsRefused() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            #expect(mkfifo(directory.appending(path: ".value.bin.lock").path(percentEncoded: false), 0o644) == 0)
            let error = await #expect(throws: ValueStoreError(.io)) {
                try await ValueStore<Void, Data>.file(url).save(Data([1]))
            }
            #expect(error?.reason?.contains("a FIFO") == true)
        }
    }

    // MARK: - Quarantine

    @Test func movingAPrivateFileAsideKeepsItsLockFilePrivate() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "secret.bin")
            try await ValueStore<Void, Data>.file(url, options: .private).save(Data([1]))
            try FileManager.default.removeItem(at: directory.appending(path: ".secret.bin.lock"))
            _ = try await FileQuarantine.moveAside(url)
            #expect(try directory.appending(path: ".secret.bin.lock").permissions() == 0o600)
        }
    }
}
