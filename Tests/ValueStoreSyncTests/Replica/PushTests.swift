import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// Pushes that are lost, repeated, batched or refused.
@Suite(.timeLimit(.minutes(2))) struct PushTests {
    static let counter = SyncPolicy<[String: Int]>.merge { _, local, remote in
        (local ?? [:]).merging(remote ?? [:], uniquingKeysWith: max)
    }

    /// A remote whose server refuses every pushed change for good ("not allowed"), and pulls
    /// from the sandbox's server.
    static func rejecting(_ sandbox: SyncSandbox) -> SyncRemote {
        let inner = sandbox.server.remote(for: sandbox.account)
        return SyncRemote(
            label: "rejecting",
            push: { request in
                SyncPushResponse(
                    epoch: try #require(request.epoch), serverTime: Int64(Date().timeIntervalSince1970 * 1_000),
                    refusal: nil, outcomes: request.changes.map { _ in .rejected("not allowed") })
            },
            pull: { try await inner.pull($0) })
    }

    @Test func aLostAcknowledgementHasItsEffectOnce() async throws {
        try await SyncSandbox.with { sandbox in
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            let phone = try sandbox.replica("phone", remote: faulty.remote)
            try await phone.syncNow()
            let counts = phone.store("counts", as: [String: Int].self, policy: Self.counter).default([:])
            try await counts.update { $0["phone", default: 0] += 1 }
            faulty.faults { $0 == .push ? .dropAnswer : .pass }
            await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
            #expect(phone.status.pendingChanges == 1)
            try await counts.update { $0["phone", default: 0] += 1 }
            faulty.always(.pass)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(sandbox.server.state(of: sandbox.account)?.records["counts"]?.record.value == json(["phone": 2]))
            #expect(try await sandbox.server.archivedConflicts(for: sandbox.account).isEmpty)
        }
    }

    @Test func repeatedRequestsChangeNothingTwice() async throws {
        try await SyncSandbox.with { sandbox in
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            faulty.always(.duplicate)
            let phone = try sandbox.replica("phone", remote: faulty.remote)
            let laptop = try sandbox.replica("laptop")
            try await syncInTurn(phone, laptop)
            try await laptop.store("theme", as: String.self).save("light")
            try await waitForALaterStamp()
            try await phone.store("theme", as: String.self).save("dark")
            try await syncInTurn(laptop, phone)
            #expect(try await phone.store("theme", as: String.self).load() == "dark")
            #expect(try await phone.archivedConflicts().isEmpty)
            let lost = try await sandbox.server.archivedConflicts(for: sandbox.account)
            #expect(lost.map(\.value) == [json("light")])
            try await laptop.syncNow()
            #expect(try await laptop.archivedConflicts().map(\.value) == [json("light")])
        }
    }

    @Test func aThousandPendingChangesArePushedInAtMostThreeRoundTrips() async throws {
        try await SyncSandbox.with { sandbox in
            let setup = try sandbox.replica("phone")
            try await setup.syncNow()
            try await setup.change(
                Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("key\($0)", json($0)) }), policy: .lastWriterWins)
            let faulty = FaultyRemote(sandbox.server.remote(for: sandbox.account))
            let phone = try sandbox.replica("phone", remote: faulty.remote)
            try await phone.syncNow()
            #expect(phone.status.pendingChanges == 0)
            #expect(faulty.requests <= 3)
            #expect(sandbox.server.state(of: sandbox.account)?.records.count == 1_000)
        }
    }

    @Test func aRejectedChangeIsKeptWithItsValueAndFailsTheWait() async throws {
        try await SyncSandbox.with { sandbox in
            let rejecting = Self.rejecting(sandbox)
            let phone = try sandbox.replica("phone", remote: rejecting)
            let theme = phone.store("theme", as: String.self)
            try await theme.save("dark")
            let waiting = Task { try await phone.waitUntilPushed() }
            try await phone.syncNow()
            await #expect(throws: ValueStoreError(.rejected)) { try await waiting.value }
            #expect(phone.status.pendingChanges == 0)
            #expect(phone.status.rejectedChanges.map(\.value) == [json("dark")])
            #expect(phone.status.rejectedChanges.first?.reason == "not allowed")
            await #expect(throws: ValueStoreError.notFound) { try await theme.load() }
            // Durable: a restart still shows it, until resolved.
            let restarted = try sandbox.replica("phone", remote: rejecting)
            _ = try await restarted.archivedConflicts()
            #expect(restarted.status.rejectedChanges.count == 1)
            try await restarted.resolve(restarted.status.rejectedChanges[0])
            #expect(restarted.status.rejectedChanges.isEmpty)
        }
    }

    /// A wait that starts after the change was rejected (a running sync was quicker) still hears
    /// of it, once.
    @Test func aWaitThatStartsAfterTheRejectionStillThrowsOnce() async throws {
        try await SyncSandbox.with { sandbox in
            let rejecting = Self.rejecting(sandbox)
            let phone = try sandbox.replica("phone", remote: rejecting)
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            #expect(phone.status.rejectedChanges.count == 1)
            await #expect(throws: ValueStoreError(.rejected)) { try await phone.waitUntilPushed() }
            try await phone.waitUntilPushed()
        }
    }
}
