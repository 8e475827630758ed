import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// Edits a fresh device makes before its first complete pull, against values the user already
/// has on the server.
@Suite(.timeLimit(.minutes(2))) struct FirstSyncTests {
    @Test func byDefaultTheServersValuesWinAndTheEditsAreArchived() async throws {
        try await SyncSandbox.with { sandbox in
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("theme", as: String.self).save("dark")
            try await laptop.syncNow()

            let phone = try sandbox.replica("phone")
            try await phone.store("theme", as: String.self).save("light")  // a fresh app's first choice
            try await phone.store("fontSize", as: Int.self).save(14)  // the server has none
            try await phone.syncNow()
            #expect(try await phone.store("theme", as: String.self).load() == "dark")
            let archived = try await phone.archivedConflicts()
            #expect(archived.map(\.cause) == [.firstSync])
            #expect(archived.map(\.value) == [json("light")])
            try await laptop.syncNow()
            #expect(try await laptop.store("theme", as: String.self).load() == "dark")
            #expect(try await laptop.store("fontSize", as: Int.self).load() == 14)
        }
    }

    @Test func keepLocalMakesTheEditsWin() async throws {
        try await SyncSandbox.with { sandbox in
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("theme", as: String.self).save("dark")
            try await laptop.syncNow()
            var options = SyncSandbox.options()
            options.firstSync = .keepLocal
            let phone = try sandbox.replica("phone", options: options)
            try await phone.store("theme", as: String.self).save("light")
            try await syncInTurn(phone, laptop)
            #expect(try await laptop.store("theme", as: String.self).load() == "light")
            // The value it replaced is archived on the phone.
            #expect(try await phone.archivedConflicts().map(\.value) == [json("dark")])
        }
    }

    @Test func overARemovalTheKeysPolicySettlesAnEdit() async throws {
        try await SyncSandbox.with { sandbox in
            let laptop = try sandbox.replica("laptop")
            let theme = laptop.store("theme", as: String.self)
            try await theme.save("dark")
            try await laptop.syncNow()
            try await theme.remove()
            try await laptop.syncNow()
            let phone = try sandbox.replica("phone")
            try await phone.store("theme", as: String.self).save("light")
            try await syncInTurn(phone, laptop)
            #expect(try await theme.load() == "light")
        }
    }

    @Test func mergeAndCompareAndSetEditsAreSettledByTheirPolicy() async throws {
        try await SyncSandbox.with { sandbox in
            let union = SyncPolicy<Set<String>>.merge { _, local, remote in (local ?? []).union(remote ?? []) }
            let laptop = try sandbox.replica("laptop")
            try await laptop.store("tags", as: Set<String>.self, policy: union).save(["work"])
            try await laptop.store("quota", as: Int.self, policy: .compareAndSet).save(5)
            try await laptop.syncNow()
            let phone = try sandbox.replica("phone")
            try await phone.store("tags", as: Set<String>.self, policy: union).save(["home"])
            try await phone.store("quota", as: Int.self, policy: .compareAndSet).save(9)
            try await phone.syncNow()
            #expect(try await phone.store("tags", as: Set<String>.self).load() == ["work", "home"])
            #expect(try await phone.store("quota", as: Int.self).load() == 5)
            #expect(try await phone.archivedConflicts().map(\.value) == [json(9)])
        }
    }
}
