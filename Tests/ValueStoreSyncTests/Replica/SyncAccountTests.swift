import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// Each account has a folder of its own on the device, and a folder serves its account only.
@Suite(.timeLimit(.minutes(2))) struct SyncAccountTests {
    /// The names of the folders in the device's directory.
    private func folders(in directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false)))
    }

    @Test func aShortIdThatSpellsALongIdsFolderHasAFolderOfItsOwn() async throws {
        try await SyncSandbox.with { sandbox in
            let directory = sandbox.folder("phone")
            let long = SyncAccount(id: String(repeating: "a", count: 130))
            try await sandbox.replica("phone", account: long).store("theme", as: String.self).save("dark")
            let spelled = try #require(try folders(in: directory).first)
            let short = SyncAccount(id: spelled)
            let other = try sandbox.replica("phone", account: short)
            await #expect(throws: ValueStoreError.notFound) { try await other.store("theme", as: String.self).load() }
            try await other.store("theme", as: String.self).save("light")
            #expect(try await sandbox.replica("phone", account: long).store("theme", as: String.self).load() == "dark")
            #expect(try folders(in: directory).count == 2)
        }
    }

    @Test func longIdsThatShareTheirStartHaveFoldersOfTheirOwn() async throws {
        try await SyncSandbox.with { sandbox in
            let start = String(repeating: "b", count: 200)
            let first = SyncAccount(id: start + "1")
            let second = SyncAccount(id: start + "2")
            try await sandbox.replica("phone", account: first).store("theme", as: String.self).save("dark")
            try await sandbox.replica("phone", account: second).store("theme", as: String.self).save("light")
            #expect(try await sandbox.replica("phone", account: first).store("theme", as: String.self).load() == "dark")
            #expect(
                try await sandbox.replica("phone", account: second).store("theme", as: String.self).load() == "light")
        }
    }

    @Test func aFolderRefusesAnotherAccount() async throws {
        try await SyncSandbox.with { sandbox in
            let directory = sandbox.folder("phone")
            try await sandbox.replica("phone").store("theme", as: String.self).save("dark")
            // Another account's replica given this folder, as a colliding name once did.
            let name = try #require(try folders(in: directory).first)
            let moved = directory.appending(path: "elsewhere", directoryHint: .isDirectory)
            try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: directory.appending(path: name), to: moved.appending(path: "user-7"))
            let intruder = try SyncReplica(
                directory: moved, account: SyncAccount(id: "user-7"),
                remote: sandbox.server.remote(for: SyncAccount(id: "user-7")), options: SyncSandbox.options())
            let error = await #expect(throws: ValueStoreError.self) {
                try await intruder.store("theme", as: String.self).load()
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.description.contains("user-42") == true)
        }
    }

    @Test func aFolderFromBeforeTheRecordIsAdoptedByItsAccount() async throws {
        try await SyncSandbox.with { sandbox in
            let replica = try sandbox.replica("phone")
            try await replica.store("theme", as: String.self).save("dark")
            #expect(try await sandbox.replica("phone").store("theme", as: String.self).load() == "dark")
        }
    }
}
