import Foundation
import Testing

@testable import ValueStore

@Suite struct DecryptedFileMemoTests {
    let key = EncryptionKey.random()
    let item = EncryptedFileFormat.Item("token.enc")

    @Test func aFileOpenedOnceIsKnownByItsBytesAndKey() throws {
        let memo = DecryptedFileMemo()
        let plaintext = Data(#""a token""#.utf8)
        let file = try EncryptedFileFormat.seal(plaintext, with: key, item: item)
        let keyring = EncryptionKeyring(current: key)
        #expect(memo.reading().plaintext(of: file, openedWith: key.secret) == nil)
        #expect(
            try EncryptedFileFormat.open(file, with: keyring, item: item, store: "test", memo: memo.reading())
                == plaintext)
        #expect(memo.reading().plaintext(of: file, openedWith: key.secret) == plaintext)
        #expect(memo.reading().plaintext(of: file, openedWith: EncryptionKey.random().secret) == nil, "another key")
        var changed = file
        changed[changed.count - 1] ^= 0x01
        #expect(memo.reading().plaintext(of: changed, openedWith: key.secret) == nil, "another byte")
    }

    @Test func aLargeFileIsNotKept() throws {
        let memo = DecryptedFileMemo()
        let plaintext = Data(repeating: 0x41, count: DecryptedFileMemo.largestFile)
        let file = try EncryptedFileFormat.seal(plaintext, with: key, item: item)
        let opened = try EncryptedFileFormat.open(
            file, with: EncryptionKeyring(current: key), item: item, store: "test", memo: memo.reading())
        #expect(opened == plaintext)
        #expect(memo.reading().plaintext(of: file, openedWith: key.secret) == nil)
    }

    @Test func everyCheckBeforeTheDecryptionStillRuns() throws {
        let memo = DecryptedFileMemo()
        let file = try EncryptedFileFormat.seal(Data("1".utf8), with: key, item: item)
        let keyring = EncryptionKeyring(current: key)
        _ = try EncryptedFileFormat.open(file, with: keyring, item: item, store: "test", memo: memo.reading())
        #expect(throws: ValueStoreError(.wrongKey)) {
            try EncryptedFileFormat.open(
                file, with: EncryptionKeyring(current: .random()), item: item, store: "test", memo: memo.reading())
        }
        #expect(throws: ValueStoreError(.itemMismatch)) {
            try EncryptedFileFormat.open(
                file, with: keyring, item: .init("other.enc"), store: "test", memo: memo.reading())
        }
    }

    @Test func aKeyringWithoutTheKeyIsRefusedAfterALoad() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let store = ValueStore<EncryptionKeyring, String>.encryptedFile(url)
            _ = try await store.save("a token", EncryptionKeyring(current: key))
            #expect(try await store.load(EncryptionKeyring(current: key)) == "a token")
            await #expect(throws: ValueStoreError(.wrongKey)) {
                try await store.load(EncryptionKeyring(current: .random()))
            }
            let rotated = EncryptionKeyring(current: .random(), previous: [key])
            #expect(try await store.load(rotated) == "a token")
        }
    }

    @Test func anotherWritersFileIsReadAfterALoad() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let reader = ValueStore<Void, String>.encryptedFile(url, key: key)
            let writer = ValueStore<Void, String>.encryptedFile(url, key: key)
            try await writer.save("first")
            #expect(try await reader.load() == "first")
            try await writer.save("second")
            #expect(try await reader.load() == "second")
            try await writer.save("first")
            #expect(try await reader.load() == "first")
        }
    }

    @Test func onlyAStoreThatHoldsItsKeyRemembersAndItForgetsOnRemove() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let keyring = EncryptionKeyring(current: key)
            let plaintext = Data(#""a token""#.utf8)
            let holding = EncryptedFile(
                url, identity: nil, durability: .durable, fileSystem: .live, remembersLastFile: true)
            try await holding.save(plaintext, with: keyring)
            #expect(try await holding.readDecrypted(with: keyring) == plaintext)
            let file = try url.bytes()
            #expect(holding.memo?.reading().plaintext(of: file, openedWith: key.secret) == plaintext)
            try await holding.remove()
            #expect(holding.memo?.reading().plaintext(of: file, openedWith: key.secret) == nil, "forgotten on remove")
            // A store whose key comes with each call (a vault, an environment) keeps nothing.
            let perCall = EncryptedFile(url, identity: nil, durability: .durable, fileSystem: .live)
            #expect(perCall.memo == nil)
        }
    }

    @Test func aLoadThatReadBeforeARemoveRemembersNothingAfterIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "token.enc")
            let keyring = EncryptionKeyring(current: key)
            let holding = EncryptedFile(
                url, identity: nil, durability: .durable, fileSystem: .live, remembersLastFile: true)
            try await holding.save(Data(#""a token""#.utf8), with: keyring)
            let memo = try #require(holding.memo)
            // A load: its reading of the memo, then the file's bytes, read before the unlink.
            let reading = memo.reading()
            let sealed = try url.bytes()
            try await holding.remove()
            // The load decrypts after `remove()` returned.
            #expect(try holding.decrypt(sealed, with: keyring, memo: reading) == Data(#""a token""#.utf8))
            #expect(memo.isEmpty, "the plaintext of the removed file is held after remove()")
            // A load that starts after the remove remembers as before.
            try await holding.save(Data(#""another""#.utf8), with: keyring)
            #expect(try await holding.readDecrypted(with: keyring) == Data(#""another""#.utf8))
            #expect(!memo.isEmpty)
        }
    }
}
