import Foundation
import Testing
import ValueStore

@Suite struct KeyRotationTests {
    @Test func theOldKeyStillReadsWhileTheNewOneWrites() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let old = EncryptionKey.random()
            let new = EncryptionKey.random()
            try await ValueStore<Void, String>.encryptedFile(url, key: old).save("before")

            let rotating = ValueStore<Void, String>.encryptedFile(
                url, keyring: EncryptionKeyring(current: new, previous: [old]))
            #expect(try await rotating.load() == "before")
            try await rotating.save("after")
            #expect(EncryptedFileHeader.keyID(url) == new.id)
            await #expect(throws: ValueStoreError(.wrongKey)) {
                try await ValueStore<Void, String>.encryptedFile(url, key: old).load()
            }
        }
    }

    @Test func reencryptingRewritesOldFilesOnly() async throws {
        try await TemporaryDirectory.with { directory in
            let old = EncryptionKey.random()
            let new = EncryptionKey.random()
            let keyring = EncryptionKeyring(current: new, previous: [old])
            let oldFile = directory.appending(path: "old.enc")
            let newFile = directory.appending(path: "new.enc")
            try await ValueStore<Void, String>.encryptedFile(oldFile, key: old).save("one")
            try await ValueStore<Void, String>.encryptedFile(newFile, key: new).save("two")

            #expect(try await keyring.reencryptFile(at: oldFile))
            #expect(try await !keyring.reencryptFile(at: newFile))
            #expect(EncryptedFileHeader.keyID(oldFile) == new.id)
            #expect(try await ValueStore<Void, String>.encryptedFile(oldFile, key: new).load() == "one")
            #expect(try await ValueStore<Void, String>.encryptedFile(newFile, key: new).load() == "two")
        }
    }

    @Test func reencryptingLeavesABadFileAsItWas() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let stranger = EncryptionKey.random()
            try await ValueStore<Void, String>.encryptedFile(url, key: stranger).save("theirs")
            let before = try url.bytes()
            let keyring = EncryptionKeyring(current: .random(), previous: [.random()])
            await #expect(throws: ValueStoreError(.wrongKey)) { try await keyring.reencryptFile(at: url) }
            #expect(try url.bytes() == before)
            await #expect(throws: ValueStoreError.notFound) {
                try await keyring.reencryptFile(at: directory.appending(path: "missing.enc"))
            }
        }
    }

    @Test func reencryptingAMissingFileCreatesNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let keyring = EncryptionKeyring(current: .random(), previous: [.random()])
            await #expect(throws: ValueStoreError.notFound) {
                try await keyring.reencryptFile(at: directory.appending(path: "missing.enc"))
            }
            let contents = try directory.contents()
            #expect(contents.isEmpty, "a failed rotation leaves nothing behind")
        }
    }
}

/// Reads the key id from an encrypted file's header (bytes 8 to 16).
enum EncryptedFileHeader {
    static func keyID(_ url: URL) -> String? {
        guard let bytes = try? url.bytes(), bytes.count >= 16 else { return nil }
        return bytes[8..<16].map { String(format: "%02x", $0) }.joined()
    }
}
