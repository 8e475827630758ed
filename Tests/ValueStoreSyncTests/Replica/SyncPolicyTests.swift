import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// Each policy, on two devices that change one key without seeing each other's change.
@Suite(.timeLimit(.minutes(2))) struct SyncPolicyTests {
    /// Two replicas that both pulled once, so their edits are concurrent and not first-sync edits.
    static func pair(_ sandbox: SyncSandbox) async throws -> (SyncReplica, SyncReplica) {
        let phone = try sandbox.replica("phone")
        let laptop = try sandbox.replica("laptop")
        try await syncInTurn(phone, laptop)
        return (phone, laptop)
    }

    @Test func lastWriterWinsKeepsTheLaterStampSaveOrRemove() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            try await phone.store("theme", as: String.self).save("dark")
            try await syncInTurn(phone, laptop)
            try await laptop.store("theme", as: String.self).remove()
            try await waitForALaterStamp()
            try await phone.store("theme", as: String.self).save("blue")  // later than the removal
            try await syncInTurn(laptop, phone, laptop)
            #expect(try await phone.store("theme", as: String.self).load() == "blue")
            #expect(try await laptop.store("theme", as: String.self).load() == "blue")
            // The removal lost, and is archived on the server and on the laptop.
            let lost = try await sandbox.server.archivedConflicts(for: sandbox.account)
            #expect(lost.count == 1 && lost[0].value == nil)
            #expect(try await laptop.archivedConflicts().map(\.value) == [nil])
        }
    }

    @Test func underSaveBeatsRemoveARemovalLosesToASaveItDidNotSee() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            let draft = phone.store("draft", as: String.self, policy: .saveBeatsRemove)
            try await draft.save("v1")
            try await syncInTurn(phone, laptop)
            try await draft.save("v2")
            try await phone.syncNow()
            // The laptop removes v1, later than v2, without having seen v2: v2 stays.
            try await laptop.store("draft", as: String.self, policy: .saveBeatsRemove).remove()
            try await syncInTurn(laptop, phone)
            #expect(try await laptop.store("draft", as: String.self).load() == "v2")
            #expect(try await phone.store("draft", as: String.self).load() == "v2")
            #expect(try await laptop.archivedConflicts().map(\.value) == [nil])
            // A removal made on what it saw applies.
            try await laptop.store("draft", as: String.self, policy: .saveBeatsRemove).remove()
            try await syncInTurn(laptop, phone)
            await #expect(throws: ValueStoreError.notFound) { try await draft.load() }
        }
    }

    @Test func underSaveBeatsRemoveASaveBeatsAnEarlierUnseenRemoval() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            let draft = phone.store("draft", as: String.self, policy: .saveBeatsRemove)
            try await draft.save("v1")
            try await syncInTurn(phone, laptop)
            try await draft.remove()
            try await phone.syncNow()
            // Made on v1, without having seen the removal, and earlier: it wins anyway.
            try await laptop.store("draft", as: String.self, policy: .saveBeatsRemove).save("kept")
            try await syncInTurn(laptop, phone)
            #expect(try await draft.load() == "kept")
            #expect(try await phone.archivedConflicts().map(\.value) == [nil])
        }
    }

    @Test func compareAndSetAppliesOnlyOverWhatItWasMadeOn() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            let quota = phone.store("quota", as: Int.self, policy: .compareAndSet)
            try await quota.save(10)
            try await syncInTurn(phone, laptop)
            try await laptop.store("quota", as: Int.self, policy: .compareAndSet).update { $0 -= 3 }
            try await quota.update { $0 -= 4 }
            try await syncInTurn(laptop, phone)
            // The phone's update came second: it is archived, and the phone takes the server's value.
            #expect(try await quota.load() == 7)
            #expect(try await phone.archivedConflicts().map(\.value) == [json(6)])
            // Done again on what it now has, it applies.
            try await quota.update { $0 -= 4 }
            try await syncInTurn(phone, laptop)
            #expect(try await laptop.store("quota", as: Int.self).load() == 3)
        }
    }

    @Test func mergeMergesOnTheDeviceAndPushesAgain() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            let policy = SyncPolicy<Set<String>>.merge { base, local, remote in
                (local ?? []).union(remote ?? [])
            }
            let phoneTags = phone.store("tags", as: Set<String>.self, policy: policy).default([])
            let laptopTags = laptop.store("tags", as: Set<String>.self, policy: policy).default([])
            try await phoneTags.update { $0.insert("a") }
            try await syncInTurn(phone, laptop)
            try await phoneTags.update { $0.insert("b") }
            try await laptopTags.update { $0.insert("c") }
            try await syncInTurn(phone, laptop, phone)
            #expect(try await phoneTags.load() == ["a", "b", "c"])
            #expect(try await laptopTags.load() == ["a", "b", "c"])
            #expect(try await sandbox.server.archivedConflicts(for: sandbox.account).isEmpty)
        }
    }

    @Test func aMergeKeyWhoseStoreIsNotMadeYetStaysPendingUnmerged() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            let policy = SyncPolicy<[String: Int]>.merge { _, local, remote in
                (local ?? [:]).merging(remote ?? [:], uniquingKeysWith: max)
            }
            try await laptop.store("counts", as: [String: Int].self, policy: policy).save(["laptop": 1])
            try await phone.store("counts", as: [String: Int].self, policy: policy).save(["phone": 1])
            try await laptop.syncNow()
            // A new process on the phone, which has not made the key's store yet.
            let restarted = try sandbox.replica("phone")
            try await restarted.syncNow()
            #expect(restarted.status.pendingChanges == 1)
            let counts = restarted.store("counts", as: [String: Int].self)
            #expect(try await counts.load() == ["phone": 1])  // not overwritten by the laptop's
            _ = restarted.store("counts", as: [String: Int].self, policy: policy)
            try await restarted.syncNow()
            #expect(restarted.status.pendingChanges == 0)
            #expect(try await counts.load() == ["phone": 1, "laptop": 1])
        }
    }

    /// A merge that fails (the server's value is of a type this version cannot decode, a newer
    /// device's schema) keeps the change pending, and the round says so: it used to succeed, the
    /// error erased from the status by the round's own success, the change pending unseen.
    @Test func aMergeThatFailsIsTheRoundsErrorAndKeepsTheChange() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await Self.pair(sandbox)
            try await laptop.store("tags", as: Int.self).save(5)
            try await laptop.syncNow()
            let policy = SyncPolicy<Set<String>>.merge { _, local, remote in (local ?? []).union(remote ?? []) }
            let tags = phone.store("tags", as: Set<String>.self, policy: policy)
            try await tags.save(["a"])
            await #expect(throws: ValueStoreError(.decodingFailed)) { try await phone.syncNow() }
            #expect((phone.status.lastError as? ValueStoreError)?.code == .decodingFailed)
            #expect(phone.status.pendingChanges == 1)
            #expect(try await tags.load() == ["a"])
            // The other keys still went both ways in that round.
            try await laptop.store("theme", as: String.self).save("dark")
            try await laptop.syncNow()
            await #expect(throws: ValueStoreError(.decodingFailed)) { try await phone.syncNow() }
            #expect(try await phone.store("theme", as: String.self).load() == "dark")
        }
    }

    /// Under `run()`, a merge that fails is shown and not backed off from: waiting does not
    /// change the value, and the other keys keep syncing at once. (It backed off up to five
    /// minutes at a time, every key's sync with it.)
    @Test func aMergeThatFailsDoesNotHoldUpTheOtherKeysUnderRun() async throws {
        try await SyncSandbox.with { sandbox in
            let (_, laptop) = try await Self.pair(sandbox)
            try await laptop.store("tags", as: Int.self).save(5)
            try await laptop.syncNow()
            var options = SyncSandbox.options()
            options.retryDelay = .seconds(60)
            let phone = try sandbox.replica("phone", options: options)
            let policy = SyncPolicy<Set<String>>.merge { _, local, remote in (local ?? []).union(remote ?? []) }
            try await phone.store("tags", as: Set<String>.self, policy: policy).save(["a"])
            let running = Task { try await phone.run() }
            defer { running.cancel() }
            try await within(.seconds(30), "the failed merge in the status") {
                for await status in phone.statusUpdates() where status.lastError != nil { return }
            }
            try await phone.store("theme", as: String.self).save("dark")
            // Well before the 60 s a back-off would take.
            try await within(.seconds(20), "the theme's push") {
                for await status in phone.statusUpdates() where status.pendingChanges <= 1 { return }
            }
            #expect(phone.status.pendingChanges == 1)
            #expect(phone.status.phase != .backingOff)
            #expect((phone.status.lastError as? ValueStoreError)?.code == .decodingFailed)
        }
    }
}
