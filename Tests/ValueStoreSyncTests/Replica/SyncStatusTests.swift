import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

/// The status and the replica's streams: what they say before first use, and when they end.
@Suite(.timeLimit(.minutes(2))) struct SyncStatusTests {
    @Test func aReopenedReplicaShowsWhatWaitsBeforeAnyStoreIsUsed() async throws {
        try await SyncSandbox.with { sandbox in
            let before = try sandbox.replica("phone")
            try await before.store("theme", as: String.self).save("dark")
            try await before.store("draft", as: String.self).save("Dear Ann")
            #expect(before.status.pendingChanges == 2)

            let reopened = try sandbox.replica("phone")
            #expect(reopened.status.pendingChanges == 2)
            let again = try sandbox.replica("phone")
            let first = try await within(.seconds(30), "the first status") {
                await again.statusUpdates().first { _ in true }
            }
            #expect(first?.pendingChanges == 2)
        }
    }

    @Test func theGuidesLoopWaitsUntilAReopenedReplicaPushed() async throws {
        try await SyncSandbox.with { sandbox in
            try await sandbox.replica("phone").store("theme", as: String.self).save("dark")
            // The first two pushes fail: the loop must not end before the third.
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            let pushes = Mutex(0)
            faulty.faults { call in
                guard call == .push else { return .pass }
                return pushes.withLock { pushes in
                    pushes += 1
                    return pushes <= 2 ? .dropRequest : .pass
                }
            }
            var options = SyncSandbox.options()
            options.retryDelay = .milliseconds(5)
            let replica = try sandbox.replica("phone", remote: faulty.remote, options: options)
            try await within(.seconds(30), "the status loop") {
                var syncing: Task<Void, any Error>?
                defer { syncing?.cancel() }
                for await status in replica.statusUpdates() {
                    // run() starts once the first status came, before anything opened the folder.
                    syncing = syncing ?? Task { try await replica.run() }
                    if status.pendingChanges == 0 { break }  // pushed, or archived
                }
            }
            #expect(sandbox.server.state(of: sandbox.account)?.records["theme"] != nil)
        }
    }

    @Test func theStreamsFinishWhenTheReplicaIsReleased() async throws {
        try await SyncSandbox.with { sandbox in
            var replica: SyncReplica? = try sandbox.replica("phone")
            try await replica?.store("theme", as: String.self).save("dark")
            let statuses = try #require(replica?.statusUpdates())
            let conflicts = try #require(replica?.conflicts())
            replica = nil
            let counted = try await within(.seconds(30), "the status stream's end") {
                await statuses.reduce(0) { count, _ in count + 1 }
            }
            #expect(counted >= 1)
            let archived = try await within(.seconds(30), "the conflicts stream's end") {
                await conflicts.reduce(0) { count, _ in count + 1 }
            }
            #expect(archived == 0)
        }
    }
}
