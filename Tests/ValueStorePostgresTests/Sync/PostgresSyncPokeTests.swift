#if PostgreSQL
import Foundation
import PostgresNIO
import Testing
import ValueStore
@testable import ValueStorePostgres
import ValueStoreSync

extension PostgresTests {
    /// A sync table's pokes name the pushing replica and the head it reached, and older pokes
    /// still mean "pull now".
    @Suite struct SyncPokes {
        @Test func aPokesPayloadNamesItsAuthorAndHead() throws {
            let payload = PostgresChangeNotice.syncPayload(
                account: "user 42", author: ReplicaID("phone 1/é"), head: ServerVersion(42))
            let notice = try #require(PostgresChangeNotice(payload))
            #expect(notice.key == PostgresKey.identifier("user 42"))
            #expect(notice.syncPoke == SyncPoke(author: ReplicaID("phone 1/é"), head: ServerVersion(42)))
        }

        @Test func anOlderServersPokeAndANewEpochsMeanPullNow() throws {
            // What the versions before authored pokes sent for every push, and a new epoch sends.
            let older = try #require(PostgresChangeNotice("0 sync \(PostgresKey.identifier("user-42"))"))
            #expect(older.syncPoke == .pullNow)
            let epoch = try #require(PostgresChangeNotice(PostgresChangeNotice.syncPayload(account: "user-42")))
            #expect(epoch.syncPoke == .pullNow)
            // A writer that is not hexadecimal UTF-8 is no author.
            #expect(PostgresChangeNotice(version: 3, writer: "sync:zz", key: "k").syncPoke == .pullNow)
            #expect(PostgresChangeNotice(version: 3, writer: "sync:abc", key: "k").syncPoke == .pullNow)
        }

        @Test func aNoticeLogSaysWhenAFollowerMayHaveMissedOne() {
            var log = PostgresNoticeLog()
            let notice = PostgresChangeNotice(version: 1, writer: "sync:70", key: "k")
            log.append(notice)
            #expect(log.notices(after: 0).notices == [notice] && !log.notices(after: 0).missed)
            #expect(log.notices(after: 1).notices.isEmpty && !log.notices(after: 1).missed)
            log.append(nil)  // the listener listened again
            #expect(log.notices(after: 1).missed)
            log.append(notice)
            #expect(log.notices(after: 0) == ([notice], true), "what came after the loss, kept")
            for _ in 0...PostgresNoticeLog.capacity {
                log.append(notice)
            }
            #expect(log.notices(after: 2).missed, "a follower further behind than the log keeps")
            #expect(!log.notices(after: log.last - 1).missed)
        }

        @Test func aPushThroughTheTablePokesWithItsAuthorAndHead() async throws {
            try await SyncTable.withTable { table, account, folder, client in
                let remote = table.remote(for: account)
                let pokes = remote.authoredPokes()
                let resolved = try await table.resolvedRecords()
                // Bounded by the suite's time limit, which fails this test by name.
                while !PostgresChanges.shared.isFollowing(client: client, table: resolved) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                let replica = try SyncTable.replica("phone", in: folder, account: account, remote: remote)
                try await replica.store("theme", as: String.self).save("dark")
                try await replica.syncNow()
                var echo: SyncPoke?
                for await poke in pokes where poke.author != nil {
                    echo = poke
                    break
                }
                #expect(echo?.author != nil && echo?.head == ServerVersion(1))
            }
        }

        /// While the table cannot be followed (a client of one connection never listens with
        /// it), the pokes say "pull now" every heartbeat, so a replica pulls on; the listener
        /// is let go with the last stream.
        @Test func pokesSayPullNowEveryHeartbeatWhileTheTableCannotBeFollowed() async throws {
            try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { client in
                var table = try PostgresSyncTable(client: client, name: PostgresServer.scratchName())
                table.heartbeatInterval = .milliseconds(100)
                try await table.createIfNeeded()
                let resolved = try await table.resolvedRecords()
                do {
                    let pokes = table.remote(for: SyncAccount(id: "user-42")).authoredPokes()
                    var heard: [SyncPoke] = []
                    // Bounded by the suite's time limit, which fails this test by name.
                    for await poke in pokes {
                        heard.append(poke)
                        if heard.count == 4 { break }
                    }
                    #expect(heard == Array(repeating: .pullNow, count: 4))
                    #expect(PostgresChanges.shared.isListening(client: client, table: resolved))
                }
                while PostgresChanges.shared.isListening(client: client, table: resolved) {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
        }
    }
}
#endif
