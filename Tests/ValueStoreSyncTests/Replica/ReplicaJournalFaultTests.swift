import Foundation
import Synchronization
import Testing
import ValueStore

@testable import ValueStoreSync

#if canImport(Glibc)
import Glibc
#endif

/// The journal's failures, forced through the `FileSystem` witness: a failed append loses
/// nothing acknowledged and says so, and a disk that fills in the middle of a fold leaves a
/// folder that opens with every acknowledged save.
@Suite(.timeLimit(.minutes(2))) struct ReplicaJournalFaultTests {
    /// How the next append fails.
    enum AppendFault: String, CaseIterable, Sendable {
        /// Half the entry is written, then the disk is full.
        case shortWriteThenFullDisk
        /// The whole entry is written, and its flush fails.
        case failedFlush
        /// Half the entry is written, then the disk is full, and cutting the half off fails too.
        case shortWriteThatCannotBeUndone
    }

    @Test(arguments: AppendFault.allCases)
    func aFailedAppendSaysSoAndLosesNothingAcknowledged(fault: AppendFault) async throws {
        try await Self.withFolder { directory in
            let faults = Faults()
            let make = { (fileSystem: FileSystem) in
                ReplicaFiles(
                    directory: directory, account: ReplicaJournalTests.account, options: .cache,
                    fileSystem: fileSystem)
            }
            let writer = make(faults.fileSystem)
            _ = try await writer.prepareFolder()
            _ = try await writer.load()
            try await writer.commit(ReplicaJournalTests.change("theme", "\"dark\"", at: 1))

            faults.arm(fault)
            await #expect(throws: ValueStoreError(.io)) {
                try await writer.commit(ReplicaJournalTests.change("draft", "\"lost\"", at: 2))
            }
            #expect(faults.failures > 0, "the fault must have been hit")
            faults.disarm()

            var expected = ["theme": "\"dark\""]
            if fault == .shortWriteThatCannotBeUndone {
                // The journal says it is unusable until it is opened again, which cuts the half off.
                await #expect(throws: ValueStoreError(.io)) {
                    try await writer.commit(ReplicaJournalTests.change("font", "12", at: 3))
                }
            } else {
                // The half entry was cut off: the next append follows the last whole one.
                try await writer.commit(ReplicaJournalTests.change("font", "12", at: 3))
                expected["font"] = "12"
            }
            #expect(ReplicaJournalTests.values(try await make(.live).load()) == expected)
        }
    }

    @Test func aDiskThatFillsInTheMiddleOfAFoldLeavesEverySaveThatReturned() async throws {
        try await Self.withFoldingWriter { writer, faults, reopened in
            let text = Self.longText
            var acknowledged: [String: String] = [:]
            var refused = 0
            for index in 0..<12 {
                if index == 3 {
                    // Room for a few appends, not for a fold's new settings file.
                    faults.fillDisk(after: 1_500)
                }
                do {
                    try await writer.commit(ReplicaJournalTests.change("key\(index)", text, at: Int64(index + 1)))
                    acknowledged["key\(index)"] = text
                } catch let error as ValueStoreError {
                    #expect(error.code == .io)
                    refused += 1
                }
            }
            #expect(faults.foldFailures > 0, "a fold must have run into the full disk")
            #expect(acknowledged.count > 3, "saves must have returned while the disk filled")
            #expect(refused > 0, "the disk must have filled up")
            #expect(ReplicaJournalTests.values(try await reopened().load()) == acknowledged)

            // With room again, the next save folds, and nothing is lost either.
            faults.disarm()
            try await writer.commit(ReplicaJournalTests.change("last", "1", at: 100))
            acknowledged["last"] = "1"
            #expect(ReplicaJournalTests.values(try await reopened().load()) == acknowledged)
        }
    }

    /// A fold whose emptying of the journal fails (its header written, its cut refused) puts
    /// the old header back: the commit that folded returns, and the next ones append and fold
    /// as before. (The journal was left unusable until the replica was opened again.)
    @Test func aFoldThatCannotEmptyTheJournalLeavesItAsItWas() async throws {
        try await Self.withFoldingWriter { writer, faults, reopened in
            let text = Self.longText
            try await writer.commit(ReplicaJournalTests.change("key0", text, at: 1))
            faults.failNextTruncate()
            try await writer.commit(ReplicaJournalTests.change("key1", text, at: 2))  // its fold fails
            #expect(faults.failures == 1, "the fold's cut must have failed")
            for index in 2..<5 {
                try await writer.commit(ReplicaJournalTests.change("key\(index)", text, at: Int64(index + 1)))
            }
            let expected = Dictionary(uniqueKeysWithValues: (0..<5).map { ("key\($0)", text) })
            #expect(ReplicaJournalTests.values(try await reopened().load()) == expected)
        }
    }

    /// A value of about 200 bytes: a commit of one passes the folding size of ``withFoldingWriter(_:)``.
    static let longText = "\"" + String(repeating: "x", count: 200) + "\""

    /// Runs `body` with replica files in a new folder that fold past 64 bytes, written through
    /// `faults` and opened, and a way to open the folder again through the live file system.
    private static func withFoldingWriter(
        _ body: (_ writer: ReplicaFiles, _ faults: Faults, _ reopened: () -> ReplicaFiles) async throws -> Void
    ) async throws {
        try await withFolder { directory in
            let faults = Faults()
            let make = { (fileSystem: FileSystem) in
                ReplicaFiles(
                    directory: directory, account: ReplicaJournalTests.account, options: .cache, foldingSize: 64,
                    fileSystem: fileSystem)
            }
            let writer = make(faults.fileSystem)
            _ = try await writer.prepareFolder()
            _ = try await writer.load()
            try await body(writer, faults) { make(.live) }
        }
    }

    static func withFolder(_ body: (_ directory: URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "journal-faults-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }
}

/// The live file system, failing as it is told to: an append's write or flush, or every write
/// once a byte budget is spent (`ENOSPC`, as a full disk).
private final class Faults: Sendable {
    private struct State {
        var fault: ReplicaJournalFaultTests.AppendFault?
        /// Whether the next `ftruncate` fails.
        var truncateFails = false
        /// The bytes the disk still takes; `nil` when it is not filling.
        var room: Int?
        var failures = 0
        /// Writes of a settings file (`write`, not the journal's `pwrite`) refused.
        var foldFailures = 0
    }

    private let state = Mutex(State())

    var failures: Int { state.withLock { $0.failures } }
    var foldFailures: Int { state.withLock { $0.foldFailures } }

    func arm(_ fault: ReplicaJournalFaultTests.AppendFault) { state.withLock { $0.fault = fault } }
    func fillDisk(after bytes: Int) { state.withLock { $0.room = bytes } }
    func failNextTruncate() { state.withLock { $0.truncateFails = true } }
    func disarm() {
        state.withLock {
            $0.fault = nil
            $0.room = nil
        }
    }

    /// How many of `count` bytes a write may write now; throws `ENOSPC` when none.
    private func allow(_ count: Int, operation: String) throws -> Int {
        try state.withLock { state in
            guard var room = state.room else { return count }
            guard room > 0 else {
                state.failures += 1
                if operation == "write" { state.foldFailures += 1 }
                throw FileSystemError(operation: operation, code: ENOSPC)
            }
            let allowed = min(room, count)
            room -= allowed
            state.room = room
            return allowed
        }
    }

    var fileSystem: FileSystem {
        var fileSystem = FileSystem.live
        let live = FileSystem.live
        fileSystem.write = { descriptor, buffer in
            let count = try self.allow(buffer.count, operation: "write")
            return try live.write(descriptor, UnsafeRawBufferPointer(rebasing: buffer.prefix(count)))
        }
        fileSystem.writeAt = { descriptor, buffer, offset in
            self.state.withLock { state in
                if state.fault == .shortWriteThenFullDisk || state.fault == .shortWriteThatCannotBeUndone,
                    state.room == nil
                {
                    // Room for half the entry, then the disk is full.
                    state.room = buffer.count / 2
                }
            }
            let count = try self.allow(buffer.count, operation: "pwrite")
            return try live.writeAt(descriptor, UnsafeRawBufferPointer(rebasing: buffer.prefix(count)), offset)
        }
        fileSystem.synchronizeData = { descriptor in
            try self.state.withLock { state in
                if state.fault == .failedFlush {
                    // Once: the flush of the undo goes through.
                    state.fault = nil
                    state.failures += 1
                    throw FileSystemError(operation: "fdatasync", code: EIO)
                }
            }
            try live.synchronizeData(descriptor)
        }
        fileSystem.truncate = { descriptor, length in
            try self.state.withLock { state in
                if state.fault == .shortWriteThatCannotBeUndone || state.truncateFails {
                    state.truncateFails = false
                    state.failures += 1
                    throw FileSystemError(operation: "ftruncate", code: EIO)
                }
            }
            try live.truncate(descriptor, length)
        }
        return fileSystem
    }
}
