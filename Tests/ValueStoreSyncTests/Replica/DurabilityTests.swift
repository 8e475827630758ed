import Foundation
import Testing
import ValueStore
import ValueStoreSyncHTTP
import ValueStoreTestSupport

@testable import ValueStoreSync

/// When each commit reaches the disk, and what a crash of the machine, which takes back what was
/// not flushed, leaves: a local change is flushed before its save returns; an acknowledgement
/// with the next commit; records pulled after the stores heard of them. Nothing is lost: a lost
/// acknowledgement's change is pushed again and settled as the same change, and a lost pull is
/// pulled again.
@Suite(.timeLimit(.minutes(2))) struct DurabilityTests {
    /// What a crash of the machine can leave of the journal at `journal`: what was flushed.
    static func cut(_ journal: URL, at length: Int) throws {
        let handle = try FileHandle(forWritingTo: journal)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(length))
    }

    static func journal(of directory: URL, account: SyncAccount) -> URL {
        ReplicaFiles.folder(in: directory, for: account.id).appending(path: "sync.journal")
    }

    @Test func anAcknowledgementIsFlushedWithTheNextCommit() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.syncNow()  // the first sync, a whole-state pull, behind it
            let theme = phone.store("theme", as: String.self)
            try await theme.save("dark")
            let saved = phone.journalExtent
            #expect(saved.flushed == saved.length, "a save returned before its flush")
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            let acknowledged = phone.journalExtent
            #expect(acknowledged.length > saved.length)
            #expect(acknowledged.flushed == saved.length, "the acknowledgement was flushed at once")
            // The next save's flush takes the acknowledgement with it.
            try await theme.save("light")
            #expect(phone.journalExtent.flushed == phone.journalExtent.length)
        }
    }

    /// A crash of the machine takes the acknowledgement back: the change is pending again, and
    /// its push is settled by the server as the same change, written once.
    @Test func aLostAcknowledgementIsPushedAgainAndSettledAsTheSameChange() async throws {
        try await SyncSandbox.with { sandbox in
            let flushed: Int
            do {
                let phone = try sandbox.replica("phone")
                try await phone.store("theme", as: String.self).save("dark")
                try await phone.syncNow()
                flushed = phone.journalExtent.flushed
                #expect(flushed < phone.journalExtent.length)
            }
            try Self.cut(Self.journal(of: sandbox.folder("phone"), account: sandbox.account), at: flushed)
            let head = try #require(sandbox.server.state(of: sandbox.account)).row.head

            let phone = try sandbox.replica("phone")
            #expect(phone.status.pendingChanges == 1)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(try await phone.store("theme", as: String.self).load() == "dark")
            #expect(sandbox.server.state(of: sandbox.account)?.row.head == head, "the change was written twice")
            #expect(try await sandbox.server.archivedConflicts(for: sandbox.account).isEmpty)
            #expect(try await phone.archivedConflicts().isEmpty)
            #expect(phone.status.rejectedChanges.isEmpty)
        }
    }

    /// Records pulled are shown, then flushed: a crash in between takes them back from this
    /// device only, and the next pull brings them again.
    @Test func aPulledRecordThatACrashTakesBackIsPulledAgain() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            let before: Int
            do {
                let tablet = try sandbox.replica("tablet")
                try await tablet.syncNow()
                #expect(try await tablet.store("theme", as: String.self).load() == "dark")
                before = tablet.journalExtent.length
                try await phone.store("theme", as: String.self).save("light")
                try await phone.syncNow()
                try await tablet.syncNow()
                #expect(try await tablet.store("theme", as: String.self).load() == "light")
                #expect(tablet.journalExtent.flushed == tablet.journalExtent.length, "a pull returned unflushed")
            }
            try Self.cut(Self.journal(of: sandbox.folder("tablet"), account: sandbox.account), at: before)

            let tablet = try sandbox.replica("tablet")
            #expect(try await tablet.store("theme", as: String.self).load() == "dark")
            #expect(tablet.status.pendingChanges == 0)
            try await tablet.syncNow()
            #expect(try await tablet.store("theme", as: String.self).load() == "light")
            #expect(try await tablet.archivedConflicts().isEmpty)
        }
    }

    /// A device process pushes its saves through HTTP to this process's server and is killed
    /// with its last acknowledgement unflushed; a crash of the machine then takes that back,
    /// while another device changes one of the keys. Reopened, the device loses nothing: its
    /// changes are pushed again and settled as the same changes (one of them overtaken), the
    /// server writes nothing more, and nothing is archived.
    @Test func aKilledDeviceWhoseUnflushedAcknowledgementIsLostLosesNothing() async throws {
        try await SyncSandbox.with { sandbox in
            let account = SyncAccount(id: "crash")
            let service = SyncHTTPService(remote: sandbox.server.remote(for:))
            let http = try LoopbackHTTPServer { request, _ in await service.respond(to: request, account: account) }
            defer { http.stop() }
            let directory = sandbox.folder("phone")
            let device = try HelperProcess(
                "sync-acknowledge-and-wait", directory.path(percentEncoded: false), http.url.absoluteString)
            let line = try await within(.seconds(60), "the device's acknowledged saves") { await device.nextLine() }
            device.kill()
            // "flushed N of M"
            let numbers = try #require(line).split(separator: " ").compactMap { Int($0) }
            try #require(numbers.count == 2)
            #expect(numbers[0] < numbers[1], "the last acknowledgement was flushed")
            try Self.cut(Self.journal(of: directory, account: account), at: numbers[0])

            let tablet = try sandbox.replica("tablet", account: account)
            try await tablet.syncNow()
            try await tablet.store("theme", as: String.self).save("tablet")
            try await tablet.syncNow()
            let head = try #require(sandbox.server.state(of: account)).row.head

            let phone = try sandbox.replica("phone", account: account)
            #expect(phone.status.pendingChanges == 2)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(try await phone.store("theme", as: String.self).load() == "tablet")
            #expect(try await phone.store("draft", as: String.self).load() == "draft-3")
            #expect(sandbox.server.state(of: account)?.row.head == head, "a change was written twice")
            #expect(try await sandbox.server.archivedConflicts(for: account).isEmpty)
            #expect(try await phone.archivedConflicts().isEmpty)
            #expect(phone.status.rejectedChanges.isEmpty)
        }
    }
}
