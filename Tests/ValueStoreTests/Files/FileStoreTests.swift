import Foundation
import Testing
import ValueStoreTesting

@testable import ValueStore

@Suite struct FileStoreTests {
    @Test func obeysTheLaws() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Data>.file(directory.appending(path: "value.bin"))
            try await ValueStoreLaws.check(store, samples: Data([1, 2, 3]), Data())
        }
    }

    @Test func savesTheExactBytes() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try await ValueStore<Void, Data>.file(url).save(bytes)
            #expect(try url.bytes() == bytes)
            #expect(try await ValueStore<Void, Data>.file(url).load() == bytes)
        }
    }

    @Test func aMissingFileIsNotFoundAndNamesTheFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "missing.bin")
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Data>.file(url).load()
            }
            #expect(error?.code == .notFound)
            #expect(error?.store == "file '\(url.path(percentEncoded: false))'")
        }
    }

    @Test func createsMissingParentDirectories() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "a/b/c/value.bin")
            try await ValueStore<Void, Data>.file(url).save(Data([7]))
            #expect(try url.bytes() == Data([7]))
        }
    }

    @Test func removeIsIdempotentAndCreatesNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Data>.file(directory.appending(path: "x/value.bin"))
            try await store.remove()
            #expect(try directory.contents().isEmpty, "removing from a missing directory creates nothing")
            try await store.save(Data([1]))
            try await store.remove()
            try await store.remove()
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
        }
    }

    @Test func removingAnAbsentValueCreatesNoLockFile() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Data>.file(directory.appending(path: "value.bin"))
            try await store.remove()
            #expect(try directory.contents() == [], "the directory exists, yet remove left no '.value.bin.lock'")
        }
    }

    @Test func savesLeaveNoTemporaryFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Data>.file(directory.appending(path: "value.bin"))
            for index in 0..<20 {
                try await store.save(Data(repeating: UInt8(index), count: index * 100))
            }
            try await store.update { $0.append(1) }
            #expect(try directory.contents() == [".value.bin.lock", "value.bin"])
        }
    }

    @Test func orphanedTemporaryFilesAreIgnoredThenCleanedUp() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            let orphan = directory.appending(path: ".value.bin.tmp-0123abcd")
            try Data("half a value".utf8).write(to: orphan)
            let store = ValueStore<Void, Data>.file(url)
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
            try await store.save(Data([1]))
            #expect(!FileManager.default.fileExists(atPath: orphan.path(percentEncoded: false)))
            #expect(try await store.load() == Data([1]))
        }
    }

    @Test func otherFilesInTheDirectoryAreLeftAlone() async throws {
        try await TemporaryDirectory.with { directory in
            let neighbour = directory.appending(path: ".other.bin.tmp-1")
            try Data([9]).write(to: neighbour)
            try await ValueStore<Void, Data>.file(directory.appending(path: "value.bin")).save(Data([1]))
            #expect(try neighbour.bytes() == Data([9]))
        }
    }

    @Test func defaultPermissionsAre0644LessTheUmask() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            try await ValueStore<Void, Data>.file(url).save(Data([1]))
            let mask = umask(0)
            umask(mask)
            #expect(try url.permissions() == 0o644 & ~Int(mask))
        }
    }

    @Test func privateFilesAre0600InA0700Directory() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "secrets/token.bin")
            try await ValueStore<Void, Data>.file(url, options: .private).save(Data([1]))
            #expect(try url.permissions() == 0o600)
            #expect(try url.deletingLastPathComponent().permissions() == 0o700)
            #expect(try directory.appending(path: "secrets/.token.bin.lock").permissions() == 0o600)
        }
    }

    @Test func aSymlinkAtTheTargetIsFollowedAndKept() async throws {
        try await TemporaryDirectory.with { directory in
            let elsewhere = directory.appending(path: "elsewhere.bin")
            try Data([1]).write(to: elsewhere)
            let url = directory.appending(path: "value.bin")
            try FileManager.default.createSymbolicLink(at: url, withDestinationURL: elsewhere)
            try await ValueStore<Void, Data>.file(url).save(Data([2]))
            #expect(try elsewhere.bytes() == Data([2]))
            #expect(try url.bytes() == Data([2]))
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false))
            #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink)
        }
    }

    @Test func aDirectoryAtThePathIsAnErrorNotAbsence() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Data>.file(url).default(Data()).load()
            }
            #expect(error?.code == .io)
        }
    }

    @Test func relaxedDurabilitySkipsSyncing() async throws {
        try await TemporaryDirectory.with { directory in
            let syncs = Calls()
            var fileSystem = FileSystem.live
            fileSystem.synchronize = { descriptor in
                syncs.increment()
                try FileSystem.live.synchronize(descriptor)
            }
            let url = directory.appending(path: "value.bin")
            let relaxed = ValueStore<Void, Data>.file(url, options: .cache, fileSystem: fileSystem)
            try await relaxed.save(Data([1]))
            #expect(syncs.value == 0)
            #expect(try await relaxed.load() == Data([1]))
            let durable = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
            try await durable.save(Data([2]))
            #expect(syncs.value == 2, "the temporary file, then the directory")
            try await durable.remove()
            #expect(syncs.value == 3, "the directory after the unlink")
        }
    }

    @Test func storesForTheSamePathCoordinate() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "count.txt")
            let counter: @Sendable () -> ValueStore<Void, Int> = {
                ValueStore<Void, Data>.file(url)
                    .map(load: { Int(String(decoding: $0, as: UTF8.self))! }, save: { Data(String($0).utf8) })
                    .default(0)
            }
            let first = counter()
            let second = counter()
            try await concurrently(200) { index in
                try await (index.isMultiple(of: 2) ? first : second).update { $0 += 1 }
            }
            #expect(try await first.load() == 200)
        }
    }

    @Test func anUnchangedUpdateDoesNotWrite() async throws {
        try await TemporaryDirectory.with { directory in
            let writes = Calls()
            var fileSystem = FileSystem.live
            fileSystem.rename = { source, destination in
                writes.increment()
                try FileSystem.live.rename(source, destination)
            }
            let store = ValueStore<Void, Data>.file(
                directory.appending(path: "v"), options: .default, fileSystem: fileSystem)
            try await store.save(Data([1]))
            try await store.update { _ in }
            #expect(writes.value == 1)
        }
    }

    @Test(arguments: [0, 1, 100])
    func aFileLongerThanItsReportedSizeIsReadWhole(reportedSize: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            let bytes = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
            try bytes.write(to: url)
            var fileSystem = FileSystem.live
            fileSystem.status = { descriptor in
                var status = try FileSystem.live.status(descriptor)
                status.size = reportedSize
                return status
            }
            let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
            #expect(try await store.load() == bytes)
        }
    }
}
