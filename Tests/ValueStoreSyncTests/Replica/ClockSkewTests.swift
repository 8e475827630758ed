import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync

/// Devices whose clocks are minutes off.
@Suite(.timeLimit(.minutes(2))) struct ClockSkewTests {
    @Test func aDeviceAheadIsRefusedOnceThenRestampedAndDoesNotWinEverything() async throws {
        try await SyncSandbox.with { sandbox in
            let onTime = try sandbox.replica("on-time")
            try await onTime.syncNow()
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            let counted = try sandbox.replica("ahead", remote: faulty.remote, options: SyncSandbox.options(offset: 600))
            // Stamped before the replica ever heard the server's time: ten minutes ahead.
            try await counted.store("theme", as: String.self).save("from the fast clock")
            try await counted.syncNow()
            #expect(counted.status.pendingChanges == 0)
            #expect(faulty.pushes == 2)  // refused as too far ahead, then stamped again
            let stamp = try #require(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record.stamp)
            #expect(stamp.milliseconds < Int64(Date().timeIntervalSince1970 * 1_000) + 60_000)

            // A change made later on a correct clock, without seeing it, wins.
            try await waitForALaterStamp()
            try await onTime.store("theme", as: String.self).save("from the correct clock")
            try await syncInTurn(onTime, counted)
            #expect(try await counted.store("theme", as: String.self).load() == "from the correct clock")
        }
    }

    /// A change stamped again after a clock that jumped ahead can come before its own
    /// replica's earlier change, whose acknowledgement was lost: the server must see that it
    /// replaces that change, whatever the stamps say, rather than take it for an older one.
    @Test func aChangeStampedAgainBelowItsOwnUnacknowledgedChangeStillWins() async throws {
        try await SyncSandbox.with { sandbox in
            let ahead = Atomic<Int64>(0)
            var options = SyncSandbox.options()
            options.clock = SyncClock { Date().addingTimeInterval(TimeInterval(ahead.load(ordering: .relaxed))) }
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            let phone = try sandbox.replica("phone", remote: faulty.remote, options: options)
            let theme = phone.store("theme", as: String.self)
            try await phone.syncNow()
            // Forty seconds ahead of the server: accepted, but the answer is lost.
            ahead.store(40, ordering: .relaxed)
            try await theme.save("first")
            faulty.faults { $0 == .push ? .dropAnswer : .pass }
            await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            faulty.always(.pass)
            // Made on "first", ten minutes ahead: refused, then stamped again below "first".
            ahead.store(600, ordering: .relaxed)
            try await theme.save("second")
            try await phone.syncNow()

            #expect(faulty.log.contains("→ tooFarAhead"))
            #expect(phone.status.pendingChanges == 0)
            #expect(try await theme.load() == "second")
            let onServer = try #require(sandbox.server.state(of: sandbox.account)?.records["theme"]?.record)
            #expect(onServer.value == Data(#""second""#.utf8))
            #expect(try await sandbox.server.archivedConflicts(for: sandbox.account).isEmpty)
        }
    }

    @Test func aChangeMadeAfterSeeingAnotherWinsWhateverTheClocks() async throws {
        try await SyncSandbox.with { sandbox in
            let behind = try sandbox.replica("behind", options: SyncSandbox.options(offset: -600))
            let ahead = try sandbox.replica("ahead", options: SyncSandbox.options(offset: 50))
            try await behind.syncNow()
            try await ahead.store("theme", as: String.self).save("seen")
            try await syncInTurn(ahead, behind)
            #expect(try await behind.store("theme", as: String.self).load() == "seen")
            try await behind.store("theme", as: String.self).save("made after seeing it")
            try await syncInTurn(behind, ahead)
            #expect(try await ahead.store("theme", as: String.self).load() == "made after seeing it")
            #expect(try await sandbox.server.archivedConflicts(for: sandbox.account).isEmpty)
        }
    }

    /// A server whose clock ran a year ahead, then was corrected, leaves a record stamped in
    /// its future; every device that pulls it stamps after it. Their later changes (made on
    /// that record, on an older one, concurrent with another, of a new key) are each delivered
    /// within one sync, not refused as too far ahead forever.
    @Test func aRecordStampedInTheFutureBlocksNoLaterChange() async throws {
        let serverAhead = Atomic<Int64>(0)
        let server = InMemorySyncServer(
            clock: SyncClock { Date().addingTimeInterval(TimeInterval(serverAhead.load(ordering: .relaxed))) })
        try await SyncSandbox.with(server: server) { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await phone.store("note", as: String.self).save("stamped on time")
            try await syncInTurn(phone, laptop)
            serverAhead.store(365 * 86_400, ordering: .relaxed)
            try await phone.syncNow()  // the phone learns the server's time: a year ahead
            try await phone.store("theme", as: String.self).save("stamped a year ahead")
            try await syncInTurn(phone, laptop)
            serverAhead.store(0, ordering: .relaxed)  // the server's clock is corrected

            try await laptop.store("theme", as: String.self).save("made on the future record")
            try await laptop.store("note", as: String.self).save("made on an older record")
            try await laptop.store("font", as: Int.self).save(14)  // a new key
            try await laptop.syncNow()
            #expect(laptop.status.pendingChanges == 0)
            #expect(laptop.status.lastError == nil)
            // Concurrent with the laptop's changes, not having pulled them.
            try await phone.store("theme", as: String.self).save("the phone's theme")
            try await phone.store("size", as: Int.self).save(3)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(phone.status.lastError == nil)

            try await syncInTurn(laptop, phone)
            let state = try #require(sandbox.server.state(of: sandbox.account))
            #expect(state.records["note"]?.record.value == json("made on an older record"))
            #expect(state.records["font"]?.record.value == json(14))
            #expect(state.records["size"]?.record.value == json(3))
            let theme = try #require(state.records["theme"]?.record.value)
            #expect(
                try await phone.store("theme", as: String.self).load() == JSONDecoder().decode(String.self, from: theme)
            )
            #expect(
                try await laptop.store("theme", as: String.self).load()
                    == JSONDecoder().decode(String.self, from: theme))
            // The theme that lost is archived, not dropped.
            let archived = try await sandbox.server.archivedConflicts(for: sandbox.account)
            #expect(archived.map(\.key) == ["theme"])
        }
    }

    /// A sync that leaves changes undelivered says why.
    @Test func aSyncThatDeliversNothingSaysWhy() async throws {
        try await SyncSandbox.with { sandbox in
            let inner = sandbox.server.remote(for: sandbox.account)
            let stubborn = SyncRemote(
                label: "always too far ahead",
                push: { request in
                    let answer = try await inner.push(
                        SyncPushRequest(
                            account: request.account, replica: request.replica, epoch: request.epoch,
                            seen: request.seen,
                            cursor: request.cursor, changes: []))
                    return SyncPushResponse(
                        epoch: answer.epoch, serverTime: answer.serverTime, refusal: answer.refusal,
                        outcomes: request.changes.map { _ in .tooFarAhead })
                },
                pull: { try await inner.pull($0) })
            let phone = try sandbox.replica("phone", remote: stubborn)
            try await phone.store("theme", as: String.self).save("never delivered")
            let error = await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            #expect(error?.code == .unavailable)
            #expect("\(error.map { "\($0)" } ?? "")".contains("too far"))
            #expect(phone.status.lastError != nil)
            #expect(phone.status.pendingChanges == 1)
        }
    }
}
