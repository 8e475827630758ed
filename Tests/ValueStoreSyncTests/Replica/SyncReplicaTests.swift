import Foundation
import Testing
import ValueStore
import ValueStoreSync

@Suite struct SyncReplicaTests {
    @Test func twoReplicasOfOneAccountConverge() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await phone.store("theme", as: String.self).save("dark")
            try await phone.syncNow()
            try await laptop.syncNow()
            #expect(try await laptop.store("theme", as: String.self).load() == "dark")
            #expect(phone.status.pendingChanges == 0)
            #expect(laptop.status.pendingChanges == 0)
        }
    }
}
