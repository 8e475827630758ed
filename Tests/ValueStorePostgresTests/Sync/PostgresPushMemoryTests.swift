#if PostgreSQL
import Foundation
import Testing
import ValueStore
import ValueStoreSync

@testable import ValueStorePostgres

extension PostgresTests {
    /// A sync table answers a push against what its own last push left (`PostgresPushMemory`),
    /// unread, and stays right when another process's table wrote or served a pull in between.
    @Suite struct PushMemory {
        /// A push answers against what its table's last push left, unread, and writes only if the
        /// account's row is still that version: here another process's table wrote in between.
        @Test func aPushAnsweredFromMemoryStillMeetsAnotherProcesssWrite() async throws {
            try await SyncTable.withTable { table, account, folder, client in
                let elsewhere = try PostgresSyncTable(client: client, name: table.name)
                let phone = try SyncTable.replica(
                    "phone", in: folder, account: account, remote: table.remote(for: account))
                let laptop = try SyncTable.replica(
                    "laptop", in: folder, account: account, remote: elsewhere.remote(for: account))
                let quota = phone.store("quota", as: Int.self, policy: .compareAndSet)
                try await quota.save(10)
                try await phone.syncNow()
                try await laptop.syncNow()
                try await laptop.store("quota", as: Int.self, policy: .compareAndSet).save(12)
                try await laptop.syncNow()
                // Made over 10, which the phone's table still remembers as the server's.
                try await quota.save(11)
                try await phone.syncNow()
                #expect(try await quota.load() == 12)
                #expect(try await table.archivedConflicts(for: account).map(\.value) == [Data("11".utf8)])
            }
        }

        /// A push answered from memory does not know of a pull another process served: the
        /// progress it remembers can be behind, and a refusal it would give is checked by a read.
        @Test func aPushAnsweredFromMemoryAfterAPullElsewhereIsNotRefused() async throws {
            try await SyncTable.withTable { table, account, folder, client in
                let here = table.remote(for: account)
                let there = try PostgresSyncTable(client: client, name: table.name).remote(for: account)
                let (phone, laptop) = (ReplicaID("phone"), ReplicaID("laptop"))
                func pull(_ replica: ReplicaID, seen: ServerVersion, through remote: SyncRemote) async throws
                    -> SyncPullResponse
                {
                    try await remote.pull(
                        SyncPullRequest(
                            account: account.id, replica: replica, epoch: nil, cursor: seen, seen: seen, limit: 100,
                            isResync: false))
                }
                let epoch = try await pull(phone, seen: .zero, through: here).epoch
                func push(_ replica: ReplicaID, seen: ServerVersion, aheadBy seconds: Int64 = 0) async throws
                    -> SyncPushResponse
                {
                    let now = Int64(Date().timeIntervalSince1970 * 1_000) + seconds * 1_000
                    let record = SyncRecord(
                        key: "theme", value: Data("\"\(replica)\"".utf8),
                        stamp: HybridTimestamp(milliseconds: now, counter: 0, replica: replica), base: nil,
                        policy: .lastWriterWins)
                    return try await here.push(
                        SyncPushRequest(
                            account: account.id, replica: replica, epoch: epoch, seen: seen, cursor: seen,
                            changes: [record]))
                }
                let accepted = try #require(try await push(laptop, seen: .zero).outcomes.first)
                guard case .accepted(let head) = accepted else {
                    Issue.record("the laptop's push was answered \(accepted)")
                    return
                }
                // Too far ahead, the phone's change is given no version: the push remembers the
                // phone having seen nothing. Its pull through the other table gives it the head.
                let ahead = try await push(phone, seen: .zero, aheadBy: 600)
                #expect(ahead.outcomes.count == 1 && ahead.refusal == nil)
                #expect(try await pull(phone, seen: .zero, through: there).cursor == head)
                let next = try await push(phone, seen: head)
                #expect(next.refusal == nil, "answered from memory, the push would say the server was restored")
            }
        }

        /// Two accounts whose ids only Unicode calls equal (`é`, and `e` with a combining accent)
        /// are two rows of the accounts table: what one's push left never answers the other's,
        /// nor raises the progress the other's replicas are remembered to have.
        @Test func accountsOnlyUnicodeCallsEqualAreRememberedApart() throws {
            let memory = PostgresPushMemory()
            let phone = ReplicaID("phone")
            func request(_ account: String) -> SyncPushRequest {
                SyncPushRequest(
                    account: account, replica: phone, epoch: nil, seen: .zero, cursor: .zero,
                    changes: [
                        SyncRecord(
                            key: "theme", value: Data("dark".utf8),
                            stamp: HybridTimestamp(milliseconds: 1, counter: 0, replica: phone), base: nil,
                            policy: .lastWriterWins)
                    ])
            }
            let (composed, decomposed) = (request("caf\u{E9}"), request("cafe\u{301}"))
            var state = SyncAccountState(row: SyncAccountRow(epoch: UUID(), head: ServerVersion(9)))
            state.progress[phone] = SyncReplicaProgress(cursor: ServerVersion(9), seen: ServerVersion(9))
            memory.remember(state, at: "100", after: composed, read: (serverTime: 1, at: .now))
            #expect(memory.recall(composed)?.version == "100")
            #expect(memory.recall(decomposed) == nil, "the other account's push would be answered from this one's")

            let other = SyncAccountState(row: SyncAccountRow(epoch: UUID(), head: ServerVersion(1)))
            memory.remember(other, at: "200", after: decomposed, read: (serverTime: 1, at: .now))
            let recalled = try #require(memory.recall(decomposed))
            #expect(recalled.state.progress[phone] == nil, "the other account's progress was raised into this one")
            #expect(memory.recall(composed)?.version == "100")
        }
    }
}
#endif
