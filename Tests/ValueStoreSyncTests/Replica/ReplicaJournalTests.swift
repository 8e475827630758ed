import Foundation
import Testing
import ValueStore

@testable import ValueStoreSync

/// The replica's journal: what a crash can leave in it, what is corruption, and folding.
@Suite(.timeLimit(.minutes(2))) struct ReplicaJournalTests {
    static let account = SyncAccount(id: "user-42")

    /// A commit of one record whose value is `text`.
    static func change(_ key: String, _ text: String, at milliseconds: Int64) -> ReplicaFiles.Changes {
        let stamp = HybridTimestamp(milliseconds: milliseconds, counter: 0, replica: ReplicaID("phone"))
        let record = SyncRecord(key: key, value: Data(text.utf8), stamp: stamp, base: nil, policy: .lastWriterWins)
        return ReplicaFiles.Changes(records: [key: LocalRecord(synced: record)])
    }

    static func values(_ loaded: ReplicaFiles.Loaded) -> [String: String] {
        loaded.records.compactMapValues { $0.value.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Runs `body` with a fresh folder's replica files, opened (`writer`), a way to open them
    /// again (`files`), and the journal's URL; the folder is removed afterwards.
    static func withFiles(
        foldingSize: Int = 256 * 1024,
        _ body: (_ writer: ReplicaFiles, _ files: () -> ReplicaFiles, _ journal: URL) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "journal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let make = {
            ReplicaFiles(directory: directory, account: account, options: .cache, foldingSize: foldingSize)
        }
        let writer = make()
        _ = try await writer.prepareFolder()
        _ = try await writer.load()
        try await body(writer, make, writer.folder.appending(path: "sync.journal"))
    }

    @Test func commitsAreReadBackInOrderAndARemovalStaysRemoved() async throws {
        try await Self.withFiles { writer, files, _ in
            try await writer.commit(Self.change("theme", "\"dark\"", at: 1))
            try await writer.commit(Self.change("draft", "\"hello\"", at: 2))
            try await writer.commit(Self.change("theme", "\"light\"", at: 3))
            try await writer.commit(ReplicaFiles.Changes(records: ["draft": LocalRecord?.none]))
            #expect(Self.values(try await files().load()) == ["theme": "\"light\""])
        }
    }

    @Test func anIncompleteLastEntryIsCutOffAndWhatCameBeforeIsKept() async throws {
        try await Self.withFiles { writer, files, journal in
            try await writer.commit(Self.change("theme", "\"dark\"", at: 1))
            let whole = try Data(contentsOf: journal)
            // An append that never returned: half an entry, then a size extended over zeros.
            for tail in [Data("VSJE".utf8) + Data([9, 0, 0, 0, 1, 2]), Data(count: 4_096)] {
                try (whole + tail).write(to: journal)
                #expect(Self.values(try await files().load()) == ["theme": "\"dark\""])
                #expect(try Data(contentsOf: journal) == whole)
            }
            // The bytes cut off are kept beside the journal, unless they were all zeros.
            let folder = journal.deletingLastPathComponent()
            let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .filter { $0.hasPrefix("sync.journal.cut-") }
            #expect(kept.count == 1)
            #expect(
                try Data(contentsOf: folder.appending(path: kept[0])) == Data("VSJE".utf8) + Data([9, 0, 0, 0, 1, 2]))
        }
    }

    @Test func aBrokenEntryWithWholeEntriesAfterItIsCorruptionAndIsLeftAlone() async throws {
        try await Self.withFiles { writer, files, journal in
            try await writer.commit(Self.change("theme", "\"dark\"", at: 1))
            try await writer.commit(Self.change("theme", "\"light\"", at: 2))
            var bytes = try Data(contentsOf: journal)
            bytes[ReplicaJournal.headerSize + ReplicaJournal.entryHeaderSize + 2] ^= 0xFF
            try bytes.write(to: journal)
            await #expect(throws: ValueStoreError(.corrupted)) { try await files().load() }
            #expect(try Data(contentsOf: journal) == bytes)
        }
    }

    /// An entry of an earlier generation, left in blocks the journal reuses after a fold, does
    /// not read as an entry.
    @Test func anEntryOfAnEarlierGenerationDoesNotRead() async throws {
        try await Self.withFiles { writer, files, journal in
            try await writer.commit(Self.change("theme", "\"dark\"", at: 1))
            let earlier = try Data(contentsOf: journal)
            try await writer.fold()
            try await writer.commit(Self.change("theme", "\"light\"", at: 2))
            let current = try Data(contentsOf: journal)
            // The earlier generation's entry, after the current one, as if its blocks came back.
            try (current + earlier.dropFirst(ReplicaJournal.headerSize)).write(to: journal)
            #expect(Self.values(try await files().load()) == ["theme": "\"light\""])
            #expect(try Data(contentsOf: journal) == current)
        }
    }

    /// An entry appended without its flush is flushed with the next: were two left unflushed, a
    /// crash could keep the later and lose the earlier, a broken entry with a whole one after it.
    @Test func onlyTheLastEntryIsEverLeftUnflushed() async throws {
        try await Self.withFiles { writer, files, _ in
            try await writer.commit(Self.change("theme", "\"dark\"", at: 1))
            let first = writer.journal.length
            #expect(writer.journal.flushedLength == first)
            try await writer.commit(Self.change("theme", "\"light\"", at: 2), flushing: false)
            #expect(writer.journal.flushedLength == first)
            try await writer.commit(Self.change("theme", "\"blue\"", at: 3), flushing: false)
            #expect(writer.journal.flushedLength == writer.journal.length)
            try await writer.commit(Self.change("theme", "\"red\"", at: 4), flushing: false)
            try await writer.journal.flush()
            #expect(writer.journal.flushedLength == writer.journal.length)
            // Opened again, the last entry may be another process's, unflushed: the next is flushed.
            try await writer.commit(Self.change("theme", "\"green\"", at: 5), flushing: false)
            let reopened = files()
            _ = try await reopened.load()
            try await reopened.commit(Self.change("theme", "\"white\"", at: 6), flushing: false)
            #expect(reopened.journal.flushedLength == reopened.journal.length)
            #expect(Self.values(try await files().load()) == ["theme": "\"white\""])
        }
    }

    @Test func aJournalOfANewerFormatIsNotRead() async throws {
        try await Self.withFiles { _, files, journal in
            let written = Data("VSJOURN2".utf8) + Data(repeating: 7, count: 40)
            try written.write(to: journal)
            await #expect(throws: ValueStoreError(.newerVersion)) { try await files().load() }
            try Data("not a journal".utf8).write(to: journal)
            await #expect(throws: ValueStoreError(.corrupted)) { try await files().load() }
            #expect(try Data(contentsOf: journal) == Data("not a journal".utf8))
        }
    }

    @Test func aLongJournalIsFoldedIntoTheSettingsFileAndEmptied() async throws {
        try await Self.withFiles(foldingSize: 2_000) { writer, files, journal in
            for index in 0..<40 {
                try await writer.commit(Self.change("key\(index % 7)", "\(index)", at: Int64(index + 1)))
            }
            let size = try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int ?? 0
            #expect(size < 2_000)
            let expected = Dictionary(uniqueKeysWithValues: (33..<40).map { ("key\($0 % 7)", "\($0)") })
            #expect(Self.values(try await files().load()) == expected)
            // A fold whose journal was not emptied (a crash in between): its entries, applied
            // again over the settings file that holds them, change nothing.
            try await writer.commit(Self.change("key0", "\"last\"", at: 100))
            let entries = try Data(contentsOf: journal)
            try await writer.fold()
            #expect(try Data(contentsOf: journal).count == ReplicaJournal.headerSize)  // a new generation
            try entries.write(to: journal)
            var folded = expected
            folded["key0"] = "\"last\""
            #expect(Self.values(try await files().load()) == folded)
        }
    }

    /// A process that last saw the journal empty, and another that appends and folds it: the
    /// journal starts again as a header of a new generation, not as nothing, so the first one
    /// sees the fold. Emptied to nothing, the journal had the size it remembered, and it went on
    /// with what it had read before, the fold's changes missing.
    @Test func aFoldIsNewsToAProcessThatLastSawTheJournalEmpty() async throws {
        try await Self.withFiles(foldingSize: 1) { writer, files, _ in
            let other = files()
            _ = try await other.load()
            try await writer.commit(Self.change("theme", "\"dark\"", at: 1))  // appended and folded
            #expect(writer.journal.length == ReplicaJournal.headerSize)
            #expect(other.journal.mayHaveNews)
            guard case .folded = try await other.journal.catchUp() else {
                Issue.record("the other process did not hear of the fold")
                return
            }
            #expect(Self.values(try await other.reload(applying: ReplicaFiles.Changes())) == ["theme": "\"dark\""])
            try await writer.commit(Self.change("theme", "\"light\"", at: 2))  // folded again
            guard case .folded = try await other.journal.catchUp() else {
                Issue.record("the other process did not hear of the second fold")
                return
            }
        }
    }

    @Test func aReplicaKeepsItsValuesAcrossReopeningsWithAJournal() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.store("draft", as: String.self).save("hello")
            try await phone.store("draft", as: String.self).remove()
            let reopened = try sandbox.replica("phone")
            #expect(try await reopened.store("theme", as: String.self).load() == "dark")
            await #expect(throws: ValueStoreError.notFound) {
                try await reopened.store("draft", as: String.self).load()
            }
            #expect(reopened.status.pendingChanges == 2)
        }
    }
}
