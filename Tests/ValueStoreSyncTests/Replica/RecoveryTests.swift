import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync

/// Copied directories, servers restored from a backup, new epochs, collected removals.
@Suite(.timeLimit(.minutes(2))) struct RecoveryTests {
    @Test func aCopiedFolderMakesItselfANewIdentity() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            try await phone.store("draft", as: String.self).save("pending when copied")
            try FileManager.default.copyItem(at: sandbox.folder("phone"), to: sandbox.folder("tablet"))
            let tablet = try sandbox.replica("tablet")
            let phoneID = try await phone.id
            let tabletID = try await tablet.id
            #expect(phoneID != tabletID)
            // The original keeps its identity, after a restart too.
            #expect(try await sandbox.replica("phone").id == phoneID)

            try await tablet.store("theme", as: String.self).save("light")
            try await tablet.syncNow()
            try await waitForALaterStamp()
            try await phone.store("theme", as: String.self).save("blue")
            try await syncInTurn(phone, tablet, phone)
            #expect(try await phone.store("theme", as: String.self).load() == "blue")
            #expect(try await tablet.store("theme", as: String.self).load() == "blue")
            #expect(try await tablet.store("draft", as: String.self).load() == "pending when copied")
            #expect(phone.status.rejectedChanges.isEmpty && tablet.status.rejectedChanges.isEmpty)
            #expect(phone.status.pendingChanges == 0 && tablet.status.pendingChanges == 0)
        }
    }

    @Test func aServerRestoredFromABackupGetsBackWhatDevicesHold() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await phone.store("theme", as: String.self).save("dark")
            try await syncInTurn(phone, laptop)
            let backup = sandbox.server.snapshot()
            try await phone.store("theme", as: String.self).save("blue")
            try await phone.store("fontSize", as: Int.self).save(16)
            try await syncInTurn(phone, laptop)
            sandbox.server.restore(backup)
            // Another device writes after the restore, so the head passes what the phone saw.
            for index in 0..<5 {
                try await laptop.store("note\(index)", as: String.self).save("after the restore")
            }
            try await syncInTurn(laptop, phone, laptop)
            let state = try #require(sandbox.server.state(of: sandbox.account))
            #expect(state.records["theme"]?.record.value == json("blue"))
            #expect(state.records["fontSize"]?.record.value == json(16))
            #expect(state.records["note4"]?.record.value == json("after the restore"))
            #expect(try await phone.store("note4", as: String.self).load() == "after the restore")
            #expect(phone.status.pendingChanges == 0 && laptop.status.pendingChanges == 0)
        }
    }

    /// A `restored` refusal records itself in the replica's file before the whole-state pull;
    /// that commit must not carry the clock of the last sync, older than the stamps of the saves
    /// made since, or the next save reuses one of their stamps (frozen clocks make it certain)
    /// and the server, which knows that stamp, refuses it as a copied folder.
    @Test func aRestoredRefusalNeverTurnsTheClockBack() async throws {
        let frozen = SyncClock { Date(timeIntervalSince1970: 1_800_000_000) }
        try await SyncSandbox.with(server: InMemorySyncServer(clock: frozen)) { sandbox in
            var options = SyncSandbox.options()
            options.clock = frozen
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            let phone = try sandbox.replica("phone", remote: faulty.remote, options: options)
            let backup = sandbox.server.snapshot()
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            sandbox.server.restore(backup)
            try await phone.store("draft", as: String.self).save("one")
            // Refused `restored`, resynced; then the push back applies and its answer is lost.
            let pushes = Atomic(0)
            faulty.faults { call in
                guard call == .push else { return .pass }
                return pushes.add(1, ordering: .relaxed).newValue == 1 ? .pass : .dropAnswer
            }
            let lostAnswer = await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            #expect(lostAnswer?.code == .outcomeUnknown)
            faulty.always(.pass)
            try await phone.store("draft", as: String.self).save("two")
            try await phone.syncNow()
            #expect(phone.status.rejectedChanges.isEmpty)
            #expect(phone.status.pendingChanges == 0)
            #expect(sandbox.server.state(of: sandbox.account)?.records["draft"]?.record.value == json("two"))
        }
    }

    @Test func aNewEpochTakesTheServersStateAndArchivesDifferences() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            let backup = sandbox.server.snapshot()
            try await phone.store("theme", as: String.self).save("blue")
            try await phone.syncNow()
            try await phone.store("draft", as: String.self).save("pending")
            sandbox.server.restore(backup)
            try await sandbox.server.startNewEpoch(for: sandbox.account)
            try await phone.syncNow()
            #expect(try await phone.store("theme", as: String.self).load() == "dark")
            await #expect(throws: ValueStoreError.notFound) { try await phone.store("draft", as: String.self).load() }
            let archived = try await phone.archivedConflicts()
            #expect(Set(archived.map(\.key)) == ["theme", "draft"])
            #expect(archived.allSatisfy { $0.cause == .newEpoch })
            // Nothing of before was pushed.
            #expect(sandbox.server.state(of: sandbox.account)?.records["draft"] == nil)
            #expect(phone.status.pendingChanges == 0)
        }
    }

    /// A removal the server acknowledged is a difference like any other when a new epoch meets
    /// a server restored from a backup that still has the value, in either order: archived.
    @Test(arguments: [true, false])
    func aNewEpochOverARestoredServerArchivesASyncedRemoval(restoringFirst: Bool) async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let draft = phone.store("draft", as: String.self)
            try await draft.save("kept on the backup")
            try await phone.syncNow()
            let backup = sandbox.server.snapshot()
            try await draft.remove()
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            if restoringFirst {
                sandbox.server.restore(backup)
                try await sandbox.server.startNewEpoch(for: sandbox.account)
            } else {
                // The phone takes the new epoch; the restore then takes the account back to
                // the old one.
                try await sandbox.server.startNewEpoch(for: sandbox.account)
                try await phone.syncNow()
                sandbox.server.restore(backup)
            }
            try await phone.syncNow()
            #expect(try await draft.load() == "kept on the backup")
            let archived = try await phone.archivedConflicts()
            #expect(archived.map(\.key) == ["draft"])
            #expect(archived.first?.value == nil)
            #expect(archived.first?.cause == .newEpoch)
        }
    }

    @Test func aReplicaBelowTheHorizonPullsTheWholeStateFirst() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.store("draft", as: String.self).save("old")
            try await phone.syncNow()
            try FileManager.default.copyItem(at: sandbox.folder("phone"), to: sandbox.folder("tablet"))
            try await phone.store("draft", as: String.self).remove()
            try await phone.syncNow()
            try await phone.syncNow()  // its pull tells the server it has the removal
            // The removal is collected: the tablet (a copy the server never knew) cannot pull it.
            try await sandbox.server.collectTombstones(olderThan: .zero)
            #expect(sandbox.server.state(of: sandbox.account)?.records["draft"] == nil)
            let tablet = try sandbox.replica("tablet")
            try await tablet.syncNow()
            await #expect(throws: ValueStoreError.notFound) { try await tablet.store("draft", as: String.self).load() }
            #expect(sandbox.server.state(of: sandbox.account)?.records["draft"] == nil)
        }
    }
}
