import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// Devices whose clocks are minutes off.
@Suite struct ClockSkewTests {
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
            try await onTime.store("theme", as: String.self).save("from the correct clock")
            try await syncInTurn(onTime, counted)
            #expect(try await counted.store("theme", as: String.self).load() == "from the correct clock")
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
