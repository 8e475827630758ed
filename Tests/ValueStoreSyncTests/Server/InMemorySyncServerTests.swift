import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// The reference server's own API: its remote, pokes, archive, epochs and collection.
@Suite(.timeLimit(.minutes(2))) struct InMemorySyncServerTests {
    static let account = SyncAccount(id: "user-42")
    static let phone = ReplicaID("phone")

    static func push(_ remote: SyncRemote, _ changes: [SyncRecord], epoch: UUID?) async throws -> SyncPushResponse {
        try await remote.push(
            SyncPushRequest(
                account: account.id, replica: phone, epoch: epoch, seen: .zero, cursor: .zero, changes: changes))
    }

    static func pull(_ remote: SyncRemote, from cursor: ServerVersion = .zero) async throws -> SyncPullResponse {
        try await remote.pull(
            SyncPullRequest(
                account: account.id, replica: phone, epoch: nil, cursor: cursor, seen: .zero, limit: 10,
                isResync: true))
    }

    static func change(_ value: String, at milliseconds: Int64 = Int64(Date().timeIntervalSince1970 * 1_000))
        -> SyncRecord
    {
        SyncRecord(
            key: "theme", value: Data(value.utf8),
            stamp: HybridTimestamp(milliseconds: milliseconds, counter: 0, replica: phone), base: nil,
            policy: .lastWriterWins)
    }

    @Test func aRemoteServesOnlyItsAccount() async throws {
        let server = InMemorySyncServer()
        let remote = server.remote(for: SyncAccount(id: "user-7"))
        await #expect(throws: ValueStoreError(.invalidConfiguration)) {
            _ = try await Self.pull(remote)
        }
    }

    @Test func everyAccountStartsInTheSameEpochAndAPushPokes() async throws {
        let server = InMemorySyncServer()
        let remote = server.remote(for: Self.account)
        var pokes = remote.pokes().makeAsyncIterator()
        let first = try await Self.pull(remote)
        #expect(first.records.isEmpty && first.isComplete)
        let answer = try await Self.push(remote, [Self.change("dark")], epoch: first.epoch)
        #expect(answer.outcomes == [.accepted(ServerVersion(1))])
        #expect(await pokes.next() != nil)
        let page = try await Self.pull(remote)
        #expect(page.records.map(\.value) == [Data("dark".utf8)])
        #expect(page.head == ServerVersion(1))
        // Another server's empty account has the same first epoch: a backup from before the
        // account existed is a restore, not a reset.
        #expect(try await Self.pull(InMemorySyncServer().remote(for: Self.account)).epoch == first.epoch)
    }

    @Test func aNewEpochRefusesTheOldOneAndPokes() async throws {
        let server = InMemorySyncServer()
        let remote = server.remote(for: Self.account)
        let first = try await Self.pull(remote)
        var pokes = remote.pokes().makeAsyncIterator()
        try await server.startNewEpoch(for: Self.account)
        #expect(await pokes.next() != nil)
        let refused = try await Self.push(remote, [Self.change("dark")], epoch: first.epoch)
        #expect(refused.refusal == .epochChanged)
        #expect(refused.outcomes.isEmpty)
        #expect(try await Self.pull(remote).epoch != first.epoch)
    }

    @Test func theArchiveKeepsLosersUntilResolved() async throws {
        let server = InMemorySyncServer()
        let remote = server.remote(for: Self.account)
        let epoch = try await Self.pull(remote).epoch
        _ = try await Self.push(
            remote, [Self.change("later", at: Int64(Date().timeIntervalSince1970 * 1_000))], epoch: epoch)
        var earlier = Self.change("earlier", at: 1_000)
        earlier.stamp.replica = ReplicaID("laptop")
        let answer = try await remote.push(
            SyncPushRequest(
                account: Self.account.id, replica: ReplicaID("laptop"), epoch: epoch, seen: .zero, cursor: .zero,
                changes: [earlier]))
        let current = server.state(of: Self.account)?.records["theme"]?.record
        #expect(answer.outcomes == [.lost(current)])
        let archived = try await server.archivedConflicts(for: Self.account)
        #expect(archived.map(\.value) == [Data("earlier".utf8)])
        try await server.resolve(archived[0], for: Self.account)
        #expect(try await server.archivedConflicts(for: Self.account).isEmpty)
    }

    @Test func collectedRemovalsRaiseTheHorizon() async throws {
        let server = InMemorySyncServer()
        let remote = server.remote(for: Self.account)
        let epoch = try await Self.pull(remote).epoch
        var removal = Self.change("", at: 1_000)
        removal.value = nil
        _ = try await Self.push(remote, [removal], epoch: epoch)
        // Not yet below the phone's cursor, which the server knows from its requests.
        try await server.collectTombstones(olderThan: .seconds(1))
        #expect(server.state(of: Self.account)?.records["theme"] != nil)
        _ = try await Self.pull(remote, from: ServerVersion(1))
        try await server.collectTombstones(olderThan: .seconds(1))
        #expect(server.state(of: Self.account)?.records["theme"] == nil)
        #expect(server.state(of: Self.account)?.row.horizon == ServerVersion(1))
        let below = try await remote.pull(
            SyncPullRequest(
                account: Self.account.id, replica: Self.phone, epoch: epoch, cursor: .zero, seen: .zero, limit: 10,
                isResync: false))
        #expect(below.refusal == .resyncNeeded)
    }
}
