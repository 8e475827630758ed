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
}
