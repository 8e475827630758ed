import Foundation
import Testing

@testable import ValueStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Forces a failure at each step of a file save and checks that each gives a clear error and
/// that the last good value still loads.
@Suite struct FileFaultTests {
    enum Step: String, CaseIterable, CustomTestStringConvertible {
        case createTemporaryFile, shortWriteThenFull, syncFile, closeFile, rename, lockFile, createDirectory

        var testDescription: String { rawValue }

        /// The live file system with this step failing, and what the error must say.
        func fileSystem() -> (FileSystem, expected: String) {
            var fileSystem = FileSystem.live
            let live = FileSystem.live
            switch self {
            case .createTemporaryFile:
                fileSystem.open = { path, flags, mode in
                    if path.contains(".tmp-") { throw FileSystemError(operation: "open", code: EACCES) }
                    return try live.open(path, flags, mode)
                }
                return (fileSystem, "could not create the temporary file")
            case .shortWriteThenFull:
                let writes = Calls()
                fileSystem.write = { descriptor, buffer in
                    writes.increment()
                    guard writes.value == 1 else { throw FileSystemError(operation: "write", code: ENOSPC) }
                    return try live.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer.prefix(buffer.count / 2)))
                }
                return (fileSystem, "could not write the temporary file: write failed: No space left on device")
            case .syncFile:
                fileSystem.synchronize = { _ in throw FileSystemError(operation: "fsync", code: EIO) }
                return (fileSystem, "could not sync the temporary file to disk: fsync failed: Input/output error")
            case .closeFile:
                fileSystem.close = { descriptor in
                    try live.close(descriptor)
                    throw FileSystemError(operation: "close", code: EIO)
                }
                return (fileSystem, "could not close the temporary file")
            case .rename:
                fileSystem.rename = { _, _ in throw FileSystemError(operation: "rename", code: EXDEV) }
                return (fileSystem, "could not rename the temporary file over the target")
            case .lockFile:
                fileSystem.lock = { _, _ in throw FileSystemError(operation: "flock", code: ENOLCK) }
                return (fileSystem, "could not lock")
            case .createDirectory:
                fileSystem.makeDirectory = { _, _ in throw FileSystemError(operation: "mkdir", code: EACCES) }
                return (fileSystem, "could not create the directory")
            }
        }
    }

    @Test(arguments: Step.allCases)
    func aFailedSaveKeepsTheLastGoodValue(step: Step) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: step == .createDirectory ? "new/value.json" : "value.json")
            let live = ValueStore<Void, Settings>.jsonFile(url)
            if step != .createDirectory {
                try await live.save(.standard)
            }
            let (fileSystem, expected) = step.fileSystem()
            let faulty = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
                .coded(Codec<Settings, Data>.json)

            let error = await #expect(throws: ValueStoreError.self) { try await faulty.save(.custom) }
            #expect(error?.code == .io)
            #expect(error?.store == "file '\(url.path(percentEncoded: false))'")
            #expect(error?.description.contains(expected) == true, "\(String(describing: error))")

            await #expect(throws: ValueStoreError(.io)) { try await faulty.update { $0.fontSize = 1 } }

            if step == .createDirectory {
                await #expect(throws: ValueStoreError.notFound) { try await live.load() }
            } else {
                #expect(try await live.load() == .standard)
                let names = try url.deletingLastPathComponent().contents()
                #expect(names.allSatisfy { !$0.contains(".tmp-") }, "a failed save leaves no temporary file: \(names)")
            }
        }
    }

    @Test func aFailedDirectorySyncReportsThatTheSaveMayNotBeDurable() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.json")
            try await ValueStore<Void, Int>.jsonFile(url).save(1)
            let syncs = Calls()
            var fileSystem = FileSystem.live
            fileSystem.synchronize = { descriptor in
                syncs.increment()
                if syncs.value == 2 { throw FileSystemError(operation: "fsync", code: EIO) }
                try FileSystem.live.synchronize(descriptor)
            }
            let faulty = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem).coded(
                Codec<Int, Data>.json)
            let error = await #expect(throws: ValueStoreError.self) { try await faulty.save(2) }
            #expect(error?.code == .io)
            #expect(error?.reason?.contains("may not survive a power loss") == true)
            #expect(try await ValueStore<Void, Int>.jsonFile(url).load() == 2, "the rename happened, completely")
        }
    }

    @Test func anUnreadableFileIsAnErrorNotAbsence() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.json")
            try await ValueStore<Void, Int>.jsonFile(url).save(1)
            var fileSystem = FileSystem.live
            fileSystem.open = { path, flags, mode in
                if flags & O_ACCMODE == O_RDONLY && path.hasSuffix("value.json") {
                    throw FileSystemError(operation: "open", code: EACCES)
                }
                return try FileSystem.live.open(path, flags, mode)
            }
            let store = ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem)
                .coded(Codec<Int, Data>.json)
                .default(0)
            let error = await #expect(throws: ValueStoreError.self) { try await store.load() }
            #expect(error?.code == .io)
            #expect(error?.description.contains("Permission denied") == true)
        }
    }

    @Test func aFailedReadIsAnError() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            try await ValueStore<Void, Data>.file(url).save(Data([1, 2]))
            var fileSystem = FileSystem.live
            fileSystem.read = { _, _ in throw FileSystemError(operation: "read", code: EIO) }
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem).load()
            }
            #expect(error?.reason == "could not read the file: read failed: Input/output error (errno \(EIO))")
        }
    }

    @Test func aFailedRemoveKeepsTheFile() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "value.bin")
            try await ValueStore<Void, Data>.file(url).save(Data([1]))
            var fileSystem = FileSystem.live
            fileSystem.unlink = { _ in throw FileSystemError(operation: "unlink", code: EPERM) }
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Data>.file(url, options: .default, fileSystem: fileSystem).remove()
            }
            #expect(error?.reason?.hasPrefix("could not remove the file") == true)
            #expect(try url.bytes() == Data([1]))
        }
    }
}
