import Foundation
import ValueStore
import ValueStoreSync

extension Demo {
    /// Two devices of one user syncing through the in-memory reference server: a change made
    /// offline reaches the other device, and of two concurrent changes the later wins while the
    /// other is archived, not lost.
    func syncTwoDevices() async throws {
        step("Sync across devices")
        let account = SyncAccount(id: "demo-user")
        let server = InMemorySyncServer()
        let folder = directory.appending(path: "sync-\(UUID().uuidString.prefix(8))", directoryHint: .isDirectory)
        defer { try? FileManager.default.removeItem(at: folder) }
        let phone = try SyncReplica(
            directory: folder.appending(path: "phone"), account: account, remote: server.remote(for: account))
        let laptop = try SyncReplica(
            directory: folder.appending(path: "laptop"), account: account, remote: server.remote(for: account))
        let phoneTheme = phone.store("theme", as: String.self)
        let laptopTheme = laptop.store("theme", as: String.self)

        try await phoneTheme.save("dark")
        say("The phone saved theme \"dark\" at once, to its own folder: \(phone.status.pendingChanges) change pending.")
        try await phone.syncNow()
        try await laptop.syncNow()
        say("After a sync of each, the laptop reads \"\(try await laptopTheme.load())\" too.")

        try await phoneTheme.save("blue")
        try await laptopTheme.save("green")  // later, without having seen "blue"
        try await phone.syncNow()
        try await laptop.syncNow()
        try await phone.syncNow()
        let phoneNow = try await phoneTheme.load()
        let laptopNow = try await laptopTheme.load()
        say("Both changed it offline; the later change wins on both: \(phoneNow) and \(laptopNow).")
        for conflict in try await phone.archivedConflicts() {
            let lost = conflict.value.map { String(decoding: $0, as: UTF8.self) } ?? "a removal"
            say("The phone archived its losing change, \(conflict.key) = \(lost), until resolved.")
            try await phone.resolve(conflict)
        }
        let onServer = try await server.archivedConflicts(for: account).count
        say("The server keeps its own archive of losers too (\(onServer) entry).")
    }
}
