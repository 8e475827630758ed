import Foundation
import Testing
import ValueStore

@Suite struct KeyVaultTests {
    @Test func aLockedVaultThrowsLockedNeverAbsence() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let vault = KeyVault()
            #expect(vault.isLocked)
            let token = ValueStore<Void, String>.encryptedFile(url, vault: vault)
            let error = await #expect(throws: ValueStoreError.self) { try await token.default("guest").load() }
            #expect(error?.code == .locked)
            #expect(error?.description.contains("token.enc") == true)
            await #expect(throws: ValueStoreError(.locked)) { try await token.optional().load() }
            await #expect(throws: ValueStoreError(.locked)) { try await token.save("s3cr3t") }
            await #expect(throws: ValueStoreError(.locked)) { try await token.remove() }
            await #expect(throws: ValueStoreError(.locked)) { try await token.default("").update { $0 += "x" } }
            #expect(!FileManager.default.fileExists(atPath: url.path(percentEncoded: false)))
        }
    }

    @Test func unlockingAndLockingAgain() async throws {
        try await TemporaryDirectory.with { directory in
            let vault = KeyVault()
            let token = ValueStore<Void, String>.encryptedFile(directory.appending(path: "token.enc"), vault: vault)
            vault.unlock(with: .random())
            #expect(!vault.isLocked)
            try await token.save("s3cr3t")
            #expect(try await token.load() == "s3cr3t")
            vault.lock()
            await #expect(throws: ValueStoreError(.locked)) { try await token.load() }
        }
    }

    @Test func unlockingWithAnotherKeyIsAWrongKey() async throws {
        try await TemporaryDirectory.with { directory in
            let vault = KeyVault(unlockedWith: EncryptionKeyring(current: .random()))
            let token = ValueStore<Void, String>.encryptedFile(directory.appending(path: "token.enc"), vault: vault)
            try await token.save("s3cr3t")
            vault.unlock(with: .random())
            await #expect(throws: ValueStoreError(.wrongKey)) { try await token.load() }
        }
    }

    @Test func updatesThroughAVaultStayAtomic() async throws {
        try await TemporaryDirectory.with { directory in
            let vault = KeyVault(unlockedWith: EncryptionKeyring(current: .random()))
            let counter = ValueStore<Void, Int>.encryptedFile(directory.appending(path: "n.enc"), vault: vault).default(
                0)
            try await concurrently(100) { _ in try await counter.update { $0 += 1 } }
            #expect(try await counter.load() == 100)
        }
    }
}
