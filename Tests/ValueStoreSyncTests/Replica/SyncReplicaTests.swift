import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

@Suite(.timeLimit(.minutes(2))) struct SyncReplicaTests {
    @Test func twoReplicasOfOneAccountConverge() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await phone.store("theme", as: String.self).save("dark")
            try await syncInTurn(phone, laptop)
            #expect(try await laptop.store("theme", as: String.self).load() == "dark")
            #expect(phone.status.pendingChanges == 0)
            #expect(laptop.status.pendingChanges == 0)
        }
    }

    @Test func aLocalSaveIsDurableAndPendingWhileTheServerIsAway() async throws {
        try await SyncSandbox.with { sandbox in
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            faulty.always(.dropRequest)
            let phone = try sandbox.replica("phone", remote: faulty.remote)
            try await phone.store("theme", as: String.self).save("dark")
            #expect(phone.status.pendingChanges == 1)
            await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            #expect(phone.status.pendingChanges == 1)
            #expect(phone.status.lastError != nil)

            // A new object over the folder, as after a restart: the change is there, pending.
            let restarted = try sandbox.replica("phone", remote: sandbox.server.remote(for: sandbox.account))
            #expect(try await restarted.store("theme", as: String.self).load() == "dark")
            #expect(restarted.status.pendingChanges == 1)
            try await restarted.syncNow()
            #expect(restarted.status.pendingChanges == 0)
            #expect(restarted.status.lastError == nil)
            let laptop = try sandbox.replica("laptop")
            try await laptop.syncNow()
            #expect(try await laptop.store("theme", as: String.self).load() == "dark")
        }
    }

    @Test func aRemovedKeyIsAbsentEverywhereAndCanBeSavedAgain() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            let draft = phone.store("draft", as: String.self)
            try await draft.save("first")
            try await syncInTurn(phone, laptop)
            try await draft.remove()
            try await syncInTurn(phone, laptop)
            await #expect(throws: ValueStoreError.notFound) {
                try await laptop.store("draft", as: String.self).load()
            }
            // Delete, then create again: the new record wins everywhere.
            try await draft.save("second")
            try await syncInTurn(phone, laptop)
            #expect(try await laptop.store("draft", as: String.self).load() == "second")
        }
    }

    @Test func removingAnAbsentKeyAndSavingTheSameValueWriteNothing() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let theme = phone.store("theme", as: String.self)
            try await theme.remove()
            #expect(phone.status.pendingChanges == 0)
            try await theme.save("dark")
            try await phone.syncNow()
            try await theme.save("dark")
            #expect(phone.status.pendingChanges == 0)
        }
    }

    @Test func anUpdateMayWriteAnotherSyncedKeyWithoutWaitingForItself() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let theme = phone.store("theme", as: String.self)
            let changedAt = phone.store("themeChangedAt", as: Int.self)
            try await theme.optional().update { value in
                try await changedAt.save(1)
                value = "dark"
            }
            #expect(try await theme.load() == "dark")
            #expect(try await changedAt.load() == 1)
            #expect(phone.status.pendingChanges == 2)
        }
    }

    /// A task started inside an update's body inherits its hold of the replica's locks, but
    /// not the right to use it: its write is refused (it used to commit unlocked, where a fold
    /// the body's own write made could lose it), and a read from it still reads.
    @Test func aWriteFromATaskStartedInsideAnUpdateIsRefused() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let theme = phone.store("theme", as: String.self)
            let changedAt = phone.store("themeChangedAt", as: Int.self)
            try await theme.save("light")
            await #expect(throws: ValueStoreError(.nestedWrite)) {
                try await theme.update { value in
                    async let read = theme.load()
                    async let written = changedAt.save(1)
                    #expect(try await read == "light")
                    _ = try await written
                    value = "dark"
                }
            }
            #expect(try await theme.load() == "light")
            await #expect(throws: ValueStoreError(.notFound)) { try await changedAt.load() }
            #expect(phone.status.pendingChanges == 1)
        }
    }

    /// A task started inside an update keeps the update's task-locals after it returned: its
    /// write, once the update returned, takes the replica's locks and commits (it was refused
    /// for good, as if the update still ran).
    @Test func aTaskStartedInsideAnUpdateWritesOnceTheUpdateReturned() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let theme = phone.store("theme", as: String.self)
            let changedAt = phone.store("themeChangedAt", as: Int.self)
            let (gate, opening) = AsyncStream<Void>.makeStream()
            let later = Mutex<Task<Void, any Error>?>(nil)
            try await theme.optional().update { value in
                later.withLock { task in
                    task = Task {
                        for await _ in gate { break }
                        try await changedAt.save(1)
                    }
                }
                value = "dark"
            }
            opening.yield()
            try await #require(later.withLock { $0 }).value
            #expect(try await changedAt.load() == 1)
            #expect(phone.status.pendingChanges == 2)
        }
    }

    /// An update of one replica whose body updates another replica, whose body writes the
    /// first: the task holds both write locks, and neither write waits for itself. (With one
    /// holder remembered, the innermost write waited for the update that waited for it.)
    @Test func nestedUpdatesOfTwoReplicasDoNotWaitForThemselves() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let work = try sandbox.replica("phone", account: SyncAccount(id: "work"))
            let theme = phone.store("theme", as: String.self)
            let changedAt = phone.store("themeChangedAt", as: Int.self)
            let workTheme = work.store("theme", as: String.self)
            _ = try await within(.seconds(30), "the nested updates") {
                try await theme.optional().update { value in
                    try await workTheme.optional().update { workValue in
                        try await changedAt.save(1)
                        workValue = "dark"
                    }
                    value = "dark"
                }
            }
            #expect(try await theme.load() == "dark")
            #expect(try await workTheme.load() == "dark")
            #expect(try await changedAt.load() == 1)
        }
    }

    @Test func noDefaultIsEverWritten() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("theme", as: String.self).save("dark")
            try await laptop.syncNow()
            // A fresh device reads its default before its first sync: nothing is written.
            #expect(try await phone.store("theme", as: String.self).default("light").load() == "light")
            #expect(phone.status.pendingChanges == 0)
            try await phone.syncNow()
            #expect(try await phone.store("theme", as: String.self).default("light").load() == "dark")
            #expect(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record.value == json("dark"))
        }
    }

    @Test func changesFollowLocalWritesAndPulls() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            let theme = laptop.store("theme", as: String.self)
            var states = theme.changes().makeAsyncIterator()
            let first = await states.next()
            #expect(first?.value == nil && first?.error == nil)
            try await theme.save("light")
            #expect(await states.next()?.value == "light")
            try await phone.store("theme", as: String.self).save("dark")
            try await syncInTurn(phone, laptop)
            // The pull of the phone's change wakes the laptop's stream, after the laptop's own
            // change lost and was archived.
            #expect(await states.next()?.value == "dark")
        }
    }

    @Test func accountsInOneFolderKeepTheirOwnState() async throws {
        try await SyncSandbox.with { sandbox in
            let other = SyncAccount(id: "user-7")
            let first = try sandbox.replica("phone")
            try await first.store("theme", as: String.self).save("dark")
            // The first account's outbox waits while the other account syncs.
            let second = try sandbox.replica("phone", account: other)
            try await second.store("theme", as: String.self).save("light")
            try await second.syncNow()
            #expect(first.status.pendingChanges == 1)
            #expect(sandbox.server.state(of: sandbox.account) == nil)
            #expect(sandbox.server.state(of: other)?.records["theme"]?.record.value == json("light"))

            let back = try sandbox.replica("phone")
            #expect(try await back.store("theme", as: String.self).load() == "dark")
            try await back.syncNow()
            #expect(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record.value == json("dark"))
            #expect(sandbox.server.state(of: other)?.records["theme"]?.record.value == json("light"))
        }
    }

    @Test func discardingPendingChangesGoesBackToTheServersValues() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let theme = phone.store("theme", as: String.self)
            try await theme.save("dark")
            try await phone.syncNow()
            try await theme.save("light")
            try await phone.store("draft", as: String.self).save("unsent")
            #expect(phone.status.pendingChanges == 2)
            try await phone.discardPendingChanges()
            #expect(phone.status.pendingChanges == 0)
            #expect(try await theme.load() == "dark")
            await #expect(throws: ValueStoreError.notFound) { try await phone.store("draft", as: String.self).load() }
        }
    }

    @Test func statusUpdatesShowPendingChangesComeAndGo() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            var updates = phone.statusUpdates().makeAsyncIterator()
            #expect(await updates.next()?.pendingChanges == 0)
            try await phone.store("theme", as: String.self).save("dark")
            var pending = 0
            while let status = await updates.next() {
                pending = status.pendingChanges
                if pending == 1 { break }
            }
            #expect(pending == 1)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(phone.status.phase == .idle)
        }
    }

    @Test func aLostChangeIsArchivedOnBothSidesAndResolved() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await syncInTurn(phone, laptop)
            var conflicts = phone.conflicts().makeAsyncIterator()
            try await phone.store("theme", as: String.self).save("dark")
            try await waitForALaterStamp()
            try await laptop.store("theme", as: String.self).save("light")  // later stamp
            try await syncInTurn(laptop, phone)
            #expect(try await phone.store("theme", as: String.self).load() == "light")
            let conflict = try #require(await conflicts.next())
            #expect(conflict.key == "theme")
            #expect(conflict.value == json("dark"))
            #expect(conflict.cause == .lost)
            let archived = try await phone.archivedConflicts()
            #expect(archived == [conflict])
            #expect(try await sandbox.server.archivedConflicts(for: sandbox.account).map(\.value) == [json("dark")])
            #expect(phone.status.unresolvedConflicts == 1)
            try await phone.resolve(archived[0])
            #expect(try await phone.archivedConflicts().isEmpty)
            #expect(phone.status.unresolvedConflicts == 0)
            // Resolved for good: a later sync does not bring it back.
            try await phone.syncNow()
            #expect(try await phone.archivedConflicts().isEmpty)
        }
    }
}

/// The JSON a store writes for `value`.
func json<Value: Encodable>(_ value: Value) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return (try? encoder.encode(value))!
}
