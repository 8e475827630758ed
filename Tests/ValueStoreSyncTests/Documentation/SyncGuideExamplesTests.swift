import Foundation
import Testing
import ValueStore
import ValueStoreSync

// The code shown in Documentation/Sync.md, compiled and run.

/// The app's theme, as the guide's examples store it.
enum Theme: String, Codable, Sendable {
    case light
    case dark
}

@Suite(.timeLimit(.minutes(2))) struct SyncGuideExamplesTests {
    @Test func usage() async throws {
        try await SyncSandbox.with { sandbox in
            let syncFolder = sandbox.folder("phone")
            let account = SyncAccount(id: "user-42")
            let server = InMemorySyncServer()
            let replica = try SyncReplica(
                directory: syncFolder, account: account,
                remote: server.remote(for: account), options: SyncOptions())
            let theme = replica.store("theme", as: Theme.self)
            let draft = replica.store("draft", as: String.self, policy: .saveBeatsRemove)
            let quota = replica.store("quota", as: Int.self, policy: .compareAndSet)
            let tags = replica.store(
                "tags", as: Set<String>.self,
                policy: .merge { base, local, remote in (local ?? []).union(remote ?? []) })
            let syncing = Task { try await replica.run() }

            try await theme.save(.dark)  // durable at once; run() pushes it
            try await replica.waitUntilPushed()  // every change made before the call acknowledged

            syncing.cancel()
            try await draft.save("Dear")
            try await quota.save(10)
            try await tags.save(["work"])
            try await replica.syncNow()  // push all pending, then pull to the head
            #expect(replica.status.pendingChanges == 0)
            #expect(server.state(of: account)?.records.count == 4)
        }
    }

    @Test func statusAndConflicts() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await phone.syncNow()
            try await laptop.syncNow()
            try await phone.store("theme", as: Theme.self).save(.light)
            try await waitForALaterStamp()
            try await laptop.store("theme", as: Theme.self).save(.dark)
            try await laptop.syncNow()
            let replica = phone
            let watching = Task {
                for await status in replica.statusUpdates() {
                    if status.pendingChanges == 0 { break }  // pushed, or archived
                }
            }
            try await replica.syncNow()
            await watching.value

            let status = replica.status
            if status.pendingChanges > 0 || !status.rejectedChanges.isEmpty {
                print("\(status.pendingChanges) changes wait; \(status.rejectedChanges.count) were refused")
            }
            #expect(status.unresolvedConflicts == 1)

            for conflict in try await replica.archivedConflicts() {
                let lost = try conflict.value.map { try JSONDecoder().decode(Theme.self, from: $0) }
                print("\(conflict.key): \(lost.map { "\($0)" } ?? "a removal") lost (\(conflict.cause))")
                try await replica.resolve(conflict)
            }
            #expect(try await replica.archivedConflicts().isEmpty)
        }
    }

    @Test func lastWriterWins() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await SyncPolicyTests.pair(sandbox)
            var onPhone = phone.store("theme", as: Theme.self)
            let onLaptop = laptop.store("theme", as: Theme.self)
            // The guide's "later": a save within the same millisecond would be ordered by the
            // replicas' identities, so the phone's save waits for a later stamp after it.
            let save = onPhone.save
            onPhone.save = { value, environment in
                let saved = try await save(value, environment)
                try await waitForALaterStamp()
                return saved
            }

            try await onPhone.save(.light)
            try await onLaptop.save(.dark)  // later: it wins, and the phone's save is archived
            try await phone.syncNow()
            try await laptop.syncNow()
            try await phone.syncNow()

            #expect(try await onPhone.load() == .dark)
            #expect(try await phone.archivedConflicts().count == 1)
        }
    }

    @Test func saveBeatsRemove() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await SyncPolicyTests.pair(sandbox)
            let onPhone = phone.store("draft", as: String.self, policy: .saveBeatsRemove)
            let onLaptop = laptop.store("draft", as: String.self, policy: .saveBeatsRemove)
            try await onPhone.save("Dear")
            try await phone.syncNow()
            try await laptop.syncNow()

            try await onPhone.save("Dear Ann")  // made on "Dear"
            try await onLaptop.remove()  // later, but made on "Dear": it loses, archived
            try await phone.syncNow()
            try await laptop.syncNow()

            #expect(try await onLaptop.load() == "Dear Ann")
        }
    }

    @Test func compareAndSet() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await SyncPolicyTests.pair(sandbox)
            let onPhone = phone.store("quota", as: Int.self, policy: .compareAndSet)
            let onLaptop = laptop.store("quota", as: Int.self, policy: .compareAndSet)
            try await onPhone.save(10)
            try await phone.syncNow()
            try await laptop.syncNow()

            try await onLaptop.update { $0 -= 3 }  // 7, pushed first: applies
            try await onPhone.update { $0 -= 4 }  // 6, made on 10 too: archived
            try await laptop.syncNow()
            try await phone.syncNow()

            #expect(try await onPhone.load() == 7)  // the phone now has the server's value
            try await onPhone.update { $0 -= 4 }  // made on 7: applies
            try await phone.syncNow()
            #expect(sandbox.server.state(of: sandbox.account)?.records["quota"]?.record.value == json(3))
        }
    }

    @Test func merge() async throws {
        try await SyncSandbox.with { sandbox in
            let (phone, laptop) = try await SyncPolicyTests.pair(sandbox)
            let perDevice = SyncPolicy<[String: Int]>.merge { base, local, remote in
                (local ?? [:]).merging(remote ?? [:], uniquingKeysWith: max)
            }
            let onPhone = phone.store("launches", as: [String: Int].self, policy: perDevice).default([:])
            let onLaptop = laptop.store("launches", as: [String: Int].self, policy: perDevice).default([:])

            let me = try await phone.id.rawValue
            try await onPhone.update { $0[me, default: 0] += 1 }  // each device counts its own
            try await onLaptop.update { $0[try await laptop.id.rawValue, default: 0] += 1 }
            try await phone.syncNow()
            try await laptop.syncNow()  // merged on the laptop, pushed again
            try await phone.syncNow()

            let total = try await onPhone.load().values.reduce(0, +)  // 2, on both devices
            #expect(total == 2)
            #expect(try await onLaptop.load().values.reduce(0, +) == 2)
        }
    }

    @Test func remoteWitness() async throws {
        try await SyncSandbox.with { sandbox in
            let account = sandbox.account
            let server = sandbox.server
            let inner = server.remote(for: account)
            let remote = SyncRemote(
                label: "flaky", push: { try await inner.push($0) },
                pull: { try await inner.pull($0) }, pokes: { inner.pokes() })
            let replica = try sandbox.replica("phone", remote: remote)
            try await replica.store("theme", as: Theme.self).save(.dark)
            try await replica.syncNow()
            let lost = try await server.archivedConflicts(for: account)  // the server's archive of losers
            #expect(lost.isEmpty)
        }
    }

    @Test func options() async throws {
        try await SyncSandbox.with { sandbox in
            var options = SyncOptions()
            options.clock = SyncClock { Date().addingTimeInterval(-600) }  // tests inject skew; default .system
            options.firstSync = .keepRemote  // edits before the first pull lose to the server's values, archived
            options.fileOptions = .cache
            let replica = try sandbox.replica("phone", options: options)
            try await replica.syncNow()
            #expect(replica.status.lastError == nil)
        }
    }

    @Test func accounts() async throws {
        try await SyncSandbox.with { sandbox in
            let syncFolder = sandbox.folder("phone")
            let server = sandbox.server
            let other = try SyncReplica(
                directory: syncFolder, account: SyncAccount(id: "user-7"),
                remote: server.remote(for: SyncAccount(id: "user-7")))
            try await other.syncNow()
            #expect(other.status.pendingChanges == 0)
        }
    }
}
