#if PostgreSQL
import Foundation
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreSync

extension PostgresTests.SyncTable {
    /// PostgreSQL compares bytes: two spellings of one key (a precomposed "é", and "e" with a
    /// combining accent) were two rows, and a device, for which they are one key, took one of
    /// them without an archive entry. Both are one key, in its composed form, on every server.
    @Test func twoSpellingsOfAKeyAreOneRowAndAConcurrentCreateLosesNothing() async throws {
        let composed = "caf\u{e9}"
        let decomposed = "cafe\u{301}"
        try await Self.withTable { table, account, folder, _ in
            let phone = try Self.replica("phone", in: folder, account: account, remote: table.remote(for: account))
            let laptop = try Self.replica("laptop", in: folder, account: account, remote: table.remote(for: account))
            try await phone.syncNow()
            try await laptop.syncNow()
            try await phone.store(decomposed, as: String.self).save("the phone's")
            try await Task.sleep(for: .milliseconds(20))  // a later stamp
            try await laptop.store(composed, as: String.self).save("the laptop's")
            try await phone.syncNow()
            try await laptop.syncNow()
            try await phone.syncNow()

            let page = try await table.remote(for: account).pull(
                SyncPullRequest(
                    account: account.id, replica: ReplicaID("key-checker"), epoch: nil, cursor: .zero, seen: .zero,
                    limit: 100, isResync: true))
            #expect(page.records.map { Array($0.key.utf8) } == [Array(composed.utf8)])
            #expect(try await phone.store(composed, as: String.self).load() == "the laptop's")
            #expect(try await laptop.store(decomposed, as: String.self).load() == "the laptop's")
            let archived = try await table.archivedConflicts(for: account)
            #expect(archived.map(\.value) == [Data(#""the phone's""#.utf8)])
        }
    }

    /// A key the tables cannot keep (U+0000, which text cannot hold) is rejected alone by the
    /// table itself, with no service in front: the push of the others applies, where the
    /// database's error used to fail all of them, again at every retry. A key over the HTTP
    /// service's 1,024 bytes, which the table always kept, it still keeps.
    @Test func aKeyTheTablesCannotKeepIsRejectedAloneByTheTable() async throws {
        try await Self.withTable { table, account, _, _ in
            let remote = table.remote(for: account)
            let epoch = try await remote.pull(
                SyncPullRequest(
                    account: account.id, replica: ReplicaID("phone"), epoch: nil, cursor: .zero, seen: .zero,
                    limit: 1, isResync: false)
            ).epoch
            let now = Int64(Date().timeIntervalSince1970 * 1_000)
            let long = String(repeating: "k", count: SyncKey.maximumBytes + 1)
            let keys = ["before", "nul\u{0}key", long, "after"]
            let changes = keys.enumerated().map { index, key in
                SyncRecord(
                    key: key, value: Data("\(index)".utf8),
                    stamp: HybridTimestamp(milliseconds: now, counter: UInt32(index), replica: ReplicaID("phone")),
                    base: nil,
                    policy: .lastWriterWins)
            }
            let answer = try await remote.push(
                SyncPushRequest(
                    account: account.id, replica: ReplicaID("phone"), epoch: epoch, seen: .zero, cursor: .zero,
                    changes: changes))
            let accepted = answer.outcomes.map { if case .accepted = $0 { true } else { false } }
            #expect(accepted == [true, false, true, true])
            #expect(answer.settled?.map(\.key) == keys)
            let page = try await remote.pull(
                SyncPullRequest(
                    account: account.id, replica: ReplicaID("key-checker"), epoch: nil, cursor: .zero, seen: .zero,
                    limit: 100, isResync: true))
            #expect(page.records.map(\.key).sorted() == ["after", "before", long])
        }
    }
}
#endif
