#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization
import Testing
import ValueStore
import ValueStorePostgres
import ValueStoreSync

extension PostgresTests {
    /// The sync server on PostgreSQL: replicas converge through it, pushes are idempotent and
    /// commit-ordered, losers are archived on the server, removals are collected, an account can
    /// be reset, and a restore from a dump gets back what devices still hold.
    @Suite struct SyncTable {
        /// A temporary folder for replicas' directories, removed after `body`.
        static func withFolder<Result: Sendable>(_ body: @Sendable (URL) async throws -> Result) async throws -> Result
        {
            let folder = FileManager.default.temporaryDirectory.appending(path: "sync-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try await body(folder)
        }

        /// Runs `body` with a created sync table of a fresh name, the account `user-42`, a
        /// temporary folder for replicas, and the running client.
        static func withTable(
            _ body: @Sendable (PostgresSyncTable, SyncAccount, URL, PostgresClient) async throws -> Void
        ) async throws {
            try await withFolder { folder in
                try await PostgresServer.withClient { client in
                    let table = try PostgresSyncTable(client: client, name: PostgresServer.scratchName())
                    try await table.createIfNeeded()
                    try await body(table, SyncAccount(id: "user-42"), folder, client)
                }
            }
        }

        /// A replica of `account` in `folder/name`, through `remote`.
        static func replica(
            _ name: String,
            in folder: URL,
            account: SyncAccount,
            remote: SyncRemote
        ) throws -> SyncReplica {
            try SyncReplica(directory: folder.appending(path: name), account: account, remote: remote)
        }

        /// A phone syncing through `here` and a laptop through `there` (running `run()`), in
        /// `folder`: the phone's save of "dark" under "theme" reaches the laptop's `changes()`,
        /// or the test fails saying `why` it should have. Then `then` runs with both replicas.
        static func expectDelivery(
            in folder: URL,
            from here: PostgresSyncTable,
            to there: PostgresSyncTable,
            _ why: String,
            sourceLocation: SourceLocation = #_sourceLocation,
            then: (_ phone: SyncReplica, _ laptop: SyncReplica) async throws -> Void = { _, _ in }
        ) async throws {
            let account = SyncAccount(id: "user-42")
            let phone = try replica("phone", in: folder, account: account, remote: here.remote(for: account))
            let laptop = try replica("laptop", in: folder, account: account, remote: there.remote(for: account))
            let states = RecordedStates(laptop.store("theme", as: String.self).changes())
            defer { states.cancel() }
            let syncing = Task { try await laptop.run() }
            defer { syncing.cancel() }
            try await laptop.syncNow()
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            #expect(
                await eventually { states.values.contains("dark") }, "\(why): \(states.states)",
                sourceLocation: sourceLocation)
            try await then(phone, laptop)
        }

        @Test func twoDevicesConvergeThroughTheServerAndArePoked() async throws {
            try await Self.withFolder { folder in
                try await PostgresServer.withTwoClients { first, second in
                    let name = PostgresServer.scratchName()
                    let here = try PostgresSyncTable(client: first, name: name)
                    try await here.createIfNeeded()
                    let there = try PostgresSyncTable(client: second, name: name)
                    try await Self.expectDelivery(
                        in: folder, from: here, to: there, "the laptop is poked through PostgreSQL and pulls"
                    ) { phone, laptop in
                        try await laptop.store("theme", as: String.self).save("light")
                        try await laptop.waitUntilPushed()
                        try await phone.syncNow()
                        #expect(try await phone.store("theme", as: String.self).load() == "light")
                        #expect(phone.status.pendingChanges == 0 && laptop.status.pendingChanges == 0)
                    }
                }
            }
        }

        @Test func twoSpellingsOfTheTablesPokeOnOneChannel() async throws {
            try await Self.withFolder { folder in
                try await PostgresServer.withTwoClients { first, second in
                    let name = PostgresServer.scratchName()
                    let here = try PostgresSyncTable(client: first, name: name)
                    try await here.createIfNeeded()
                    let there = try PostgresSyncTable(client: second, name: "public.\(name)")
                    try await Self.expectDelivery(
                        in: folder, from: here, to: there,
                        "a push through one spelling pokes a device that uses the other")
                }
            }
        }

        @Test func aDeviceWhoseTablesCannotBeListenedToStillPulls() async throws {
            try await Self.withFolder { folder in
                try await PostgresServer.withClient { client in
                    // A pool of one: listening would take its last connection, so nothing listens.
                    try await PostgresServer.withClient(configuration: PostgresServer.oneConnection()) { small in
                        let name = PostgresServer.scratchName()
                        let here = try PostgresSyncTable(client: client, name: name)
                        try await here.createIfNeeded()
                        var there = try PostgresSyncTable(client: small, name: name)
                        there.heartbeatInterval = .milliseconds(200)
                        try await Self.expectDelivery(
                            in: folder, from: here, to: there, "while no poke can come, run() pulls every heartbeat")
                    }
                }
            }
        }

        @Test func aPushRepeatedAfterALostAnswerHasItsEffectOnce() async throws {
            try await Self.withTable { table, account, folder, client in
                let inner = table.remote(for: account)
                let answers = Mutex(0)
                // Every push is applied, and its first answer lost; the replica sends it again.
                let lossy = SyncRemote(
                    label: "lossy",
                    push: { request in
                        let response = try await inner.push(request)
                        let first = answers.withLock { answers in
                            answers += 1
                            return answers == 1
                        }
                        if first { throw ValueStoreError(.outcomeUnknown, reason: "the answer was lost") }
                        return response
                    },
                    pull: { try await inner.pull($0) }, pokes: { inner.pokes() })
                let phone = try Self.replica("phone", in: folder, account: account, remote: lossy)
                try await phone.store("count", as: Int.self).save(1)
                await #expect(throws: ValueStoreError.self) { try await phone.syncNow() }
                #expect(phone.status.pendingChanges == 1, "an unanswered push keeps its change")
                try await phone.syncNow()
                #expect(phone.status.pendingChanges == 0)
                let head = try await PostgresServer.integer(
                    client, "SELECT head FROM \(unescaped: table.name)_accounts WHERE account = 'user-42'")
                #expect(head == 1, "the change was written once")
                #expect(try await table.archivedConflicts(for: account).isEmpty)
            }
        }

        @Test func concurrentPushesAreCommitOrderedAndNoPullSkipsOne() async throws {
            try await Self.withTable { table, account, folder, client in
                let writers = try (0..<6).map {
                    try Self.replica(
                        "writer-\($0)", in: folder, account: account, remote: table.remote(for: account))
                }
                let reader = try Self.replica(
                    "reader", in: folder, account: account, remote: table.remote(for: account))
                let done = Done()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, writer) in writers.enumerated() {
                        group.addTask {
                            for round in 0..<10 {
                                try await writer.store("key-\(index)-\(round)", as: Int.self).save(round)
                                try await writer.syncNow()
                            }
                        }
                    }
                    group.addTask {
                        // Pulls while the pushes commit, in whatever order they do.
                        while !done.value.withLock({ $0 }) {
                            try await reader.syncNow()
                        }
                    }
                    for _ in writers {
                        try await group.next()
                    }
                    done.value.withLock { $0 = true }
                    try await group.waitForAll()
                }
                try await reader.syncNow()
                for index in writers.indices {
                    for round in 0..<10 {
                        #expect(try await reader.store("key-\(index)-\(round)", as: Int.self).load() == round)
                    }
                }
            }
        }

        /// Pushes read without a lock and write only over the account row they read: of many
        /// replicas pushing a compare-and-set change made on the same absent key at once, from
        /// two clients, exactly one is accepted, and every version is given once.
        @Test func racingCompareAndSetPushesHaveOneWinner() async throws {
            try await PostgresServer.withTwoClients { first, second in
                let account = SyncAccount(id: "user-42")
                let name = PostgresServer.scratchName()
                let tables = [
                    try PostgresSyncTable(client: first, name: name), try PostgresSyncTable(client: second, name: name),
                ]
                try await tables[0].createIfNeeded()
                let remotes = tables.map { $0.remote(for: account) }
                let epoch = try await remotes[0].pull(
                    SyncPullRequest(
                        account: account.id, replica: ReplicaID("looker"), epoch: nil, cursor: .zero, seen: .zero,
                        limit: 1, isResync: false)
                ).epoch
                for round in 0..<5 {
                    let outcomes = try await withThrowingTaskGroup(of: SyncPushResponse.Outcome.self) { group in
                        for index in 0..<8 {
                            group.addTask {
                                let replica = ReplicaID("racer-\(index)")
                                let change = SyncRecord(
                                    key: "quota-\(round)", value: Data("\(index)".utf8),
                                    stamp: HybridTimestamp(milliseconds: 1_000, counter: 0, replica: replica),
                                    base: nil, policy: .compareAndSet)
                                let response = try await remotes[index % 2].push(
                                    SyncPushRequest(
                                        account: account.id, replica: replica, epoch: epoch, seen: .zero,
                                        cursor: .zero, changes: [change]))
                                return try #require(response.outcomes.first, "\(response)")
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    let versions = outcomes.compactMap { outcome -> ServerVersion? in
                        if case .accepted(let version) = outcome { version } else { nil }
                    }
                    #expect(versions.count == 1, "round \(round): \(outcomes)")
                }
                let page = try await remotes[1].pull(
                    SyncPullRequest(
                        account: account.id, replica: ReplicaID("looker"), epoch: epoch, cursor: .zero, seen: .zero,
                        limit: 100, isResync: false))
                #expect(page.records.count == 5)
                #expect(Set(page.records.compactMap(\.version)).count == 5)
                #expect(page.head == page.records.compactMap(\.version).max())
            }
        }

        /// Whether the writers are done, for the reader that pulls meanwhile.
        final class Done: Sendable {
            let value = Mutex(false)
        }

        @Test func aCompareAndSetLoserIsArchivedOnTheServerUntilResolved() async throws {
            try await Self.withTable { table, account, folder, client in
                let phone = try Self.replica(
                    "phone", in: folder, account: account, remote: table.remote(for: account))
                let laptop = try Self.replica(
                    "laptop", in: folder, account: account, remote: table.remote(for: account))
                try await phone.store("quota", as: Int.self, policy: .compareAndSet).save(10)
                try await phone.syncNow()
                try await laptop.syncNow()
                try await phone.store("quota", as: Int.self, policy: .compareAndSet).save(11)
                try await laptop.store("quota", as: Int.self, policy: .compareAndSet).save(12)
                try await phone.syncNow()
                try await laptop.syncNow()
                #expect(try await laptop.store("quota", as: Int.self, policy: .compareAndSet).load() == 11)
                let lost = try await table.archivedConflicts(for: account)
                #expect(lost.count == 1)
                #expect(lost.first?.value == Data("12".utf8), "the loser's bytes, as its store encoded them")
                try await table.resolve(lost[0], for: account)
                #expect(try await table.archivedConflicts(for: account).isEmpty)
            }
        }

        @Test func removalsEveryReplicaPulledAreCollectedAndANewReplicaStillConverges() async throws {
            try await Self.withTable { table, account, folder, client in
                let phone = try Self.replica(
                    "phone", in: folder, account: account, remote: table.remote(for: account))
                try await phone.store("draft", as: String.self).save("Dear")
                try await phone.store("theme", as: String.self).save("dark")
                try await phone.syncNow()
                try await phone.store("draft", as: String.self).remove()
                try await phone.syncNow()
                try await phone.syncNow()
                try await table.collectTombstones(olderThan: .zero)
                let removals = try await PostgresServer.integer(
                    client, "SELECT count(*)::bigint FROM \(unescaped: table.name)_records WHERE removal")
                #expect(removals == 0, "the removal every replica pulled is collected")
                let horizon = try await PostgresServer.integer(
                    client, "SELECT horizon FROM \(unescaped: table.name)_accounts WHERE account = 'user-42'")
                #expect(horizon > 0)
                let tablet = try Self.replica(
                    "tablet", in: folder, account: account, remote: table.remote(for: account))
                try await tablet.syncNow()
                #expect(try await tablet.store("theme", as: String.self).load() == "dark")
                await #expect(throws: ValueStoreError.notFound) {
                    try await tablet.store("draft", as: String.self).load()
                }
            }
        }

        @Test func aNewEpochPushesNothingAndArchivesWhatDiffered() async throws {
            try await Self.withTable { table, account, folder, client in
                let phone = try Self.replica(
                    "phone", in: folder, account: account, remote: table.remote(for: account))
                try await phone.store("theme", as: String.self).save("dark")
                try await phone.syncNow()
                try await phone.store("theme", as: String.self).save("light")
                try await table.startNewEpoch(for: account)
                try await phone.syncNow()
                #expect(phone.status.pendingChanges == 0)
                #expect(try await phone.store("theme", as: String.self).load() == "dark", "the server's value")
                #expect(
                    try await phone.archivedConflicts().contains { $0.value == Data(#""light""#.utf8) },
                    "the local difference is archived, not pushed")
            }
        }

        @Test func aServerRestoredFromADumpGetsBackWhatDevicesStillHold() async throws {
            try await Self.withTable { table, account, folder, client in
                let phone = try Self.replica(
                    "phone", in: folder, account: account, remote: table.remote(for: account))
                let laptop = try Self.replica(
                    "laptop", in: folder, account: account, remote: table.remote(for: account))
                try await phone.store("theme", as: String.self).save("dark")
                try await phone.syncNow()
                let dump = folder.appending(path: "sync.dump")
                try await PostgresServer.dump(table, to: dump)
                // Acknowledged after the dump: lost when it is restored.
                try await phone.store("draft", as: String.self).save("Dear")
                try await phone.syncNow()
                try await laptop.syncNow()
                #expect(try await laptop.store("draft", as: String.self).load() == "Dear")
                try await PostgresServer.restore(dump, of: table)
                // Another device pushes after the restore, moving the head past the phone's cursor.
                try await laptop.store("tags", as: [String].self).save(["work"])
                try await laptop.syncNow()
                try await phone.syncNow()
                try await laptop.syncNow()
                let fresh = try Self.replica(
                    "tablet", in: folder, account: account, remote: table.remote(for: account))
                try await fresh.syncNow()
                #expect(try await fresh.store("draft", as: String.self).load() == "Dear", "pushed back")
                #expect(try await fresh.store("theme", as: String.self).load() == "dark")
                #expect(try await fresh.store("tags", as: [String].self).load() == ["work"])
            }
        }
    }
}
#endif
