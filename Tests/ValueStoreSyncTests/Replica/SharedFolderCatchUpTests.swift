import Foundation
import Testing
import ValueStore

@testable import ValueStoreSync

/// Two replicas on one folder, as an app and its extension hold it, in one process: each sees
/// what the other folded into the settings file, however it last saw the journal.
@Suite(.timeLimit(.minutes(1))) struct SharedFolderCatchUpTests {
    /// Two replicas of one account on one folder, offline, whose journal folds after 1 KiB.
    static func pair(in sandbox: SyncSandbox) async throws -> (app: SyncReplica, widget: SyncReplica) {
        var options = SyncSandbox.options()
        options.journalFoldingSize = 1_024
        let offline = SyncRemote(
            label: "offline",
            push: { _ in throw ValueStoreError(.unavailable, store: "offline") },
            pull: { _ in throw ValueStoreError(.unavailable, store: "offline") })
        let app = try sandbox.replica("device", remote: offline, options: options)
        let widget = try sandbox.replica("device", remote: offline, options: options)
        _ = try await app.id
        _ = try await widget.id
        return (app, widget)
    }

    /// A save past the folding size is appended and folded at once: the other replica reads it
    /// from the settings file, and its own such save reaches the first. (That a process which
    /// last saw the journal empty hears of a fold is pinned, deterministically, by
    /// `ReplicaJournalTests.aFoldIsNewsToAProcessThatLastSawTheJournalEmpty`.)
    @Test func eachReplicaReadsWhatTheOtherFolded() async throws {
        try await SyncSandbox.with { sandbox in
            let (app, widget) = try await Self.pair(in: sandbox)
            let draft = String(repeating: "a long draft ", count: 200)
            try await app.store("draft", as: String.self).save(draft)
            #expect(try await widget.store("draft", as: String.self).load() == draft)
            try await widget.store("draft", as: String.self).save("edited")
            #expect(try await app.store("draft", as: String.self).load() == "edited")
        }
    }

    /// A fold the other replica heard of but could not read (its settings file failed to read
    /// once) is read again at the next catch-up, though the journal did not change since.
    @Test func aFoldThatFailedToReadIsReadAgainNextTime() async throws {
        try await SyncSandbox.with { sandbox in
            let (app, widget) = try await Self.pair(in: sandbox)
            let draft = String(repeating: "a long draft ", count: 200)
            try await app.store("draft", as: String.self).save(draft)
            let settings = app.files.folder.appending(path: ReplicaFiles.settingsName)
            let folded = try Data(contentsOf: settings)
            try Data("not a property list".utf8).write(to: settings)
            await #expect(throws: ValueStoreError.self) { try await widget.store("draft", as: String.self).load() }
            try folded.write(to: settings)
            #expect(try await widget.store("draft", as: String.self).load() == draft)
        }
    }
}
