import Foundation
import Testing
import ValueStoreTesting

@testable import ValueStore

@Suite struct EncryptedFileTests {
    struct Credential: Codable, Equatable, Sendable {
        var user: String
        var password: String

        static let alice = Credential(user: "alice", password: "correct horse battery staple")
        static let bob = Credential(user: "bob", password: "hunter2-but-longer")
    }

    let key = EncryptionKey.random()

    @Test func obeysTheLaws() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            try await ValueStoreLaws.check(
                ValueStore<Void, Credential>.encryptedFile(url, key: key), samples: .alice, .bob)
            let keyed = ValueStore<EncryptionKey, Credential>.encryptedFile(url)
            try await ValueStoreLaws.check(keyed, environment: key, samples: .alice, .bob)
        }
    }

    @Test func theFileFollowsTheDocumentedFormat() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            try await ValueStore<Void, Credential>.encryptedFile(url, key: key).save(.alice)
            let bytes = Array(try url.bytes())
            let plaintext = try JSONEncoder().encode(Credential.alice)
            #expect(bytes.count == 44 + plaintext.count + 16)
            #expect(bytes[0..<4] == Array("VSEF".utf8)[...])
            #expect(bytes[4] == 1, "format version")
            #expect(bytes[5] == 1, "AES-256-GCM")
            #expect(bytes[6..<8] == [0, 0], "reserved")
            #expect(bytes[8..<16].map { String(format: "%02x", $0) }.joined() == key.id)
            let itemID = Digest.sha256(Data("ValueStore item credential.enc".utf8)).prefix(8)
            #expect(Data(bytes[16..<24]) == itemID)
            #expect(bytes[36..<44].reduce(0) { $0 << 8 | Int($1) } == plaintext.count)
        }
    }

    @Test func everySaveUsesAFreshNonce() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            let store = ValueStore<Void, Credential>.encryptedFile(url, key: key)
            var nonces = Set<Data>()
            for _ in 0..<20 {
                try await store.save(.alice)
                nonces.insert(try url.bytes()[24..<36])
            }
            #expect(nonces.count == 20)
        }
    }

    @Test func noPlaintextEverReachesTheDisk() async throws {
        try await TemporaryDirectory.with { directory in
            let written = Locked<[Data]>([])
            var fileSystem = FileSystem.live
            fileSystem.write = { descriptor, buffer in
                written.withLock { $0.append(Data(buffer)) }
                return try FileSystem.live.write(descriptor, buffer)
            }
            let url = directory.appending(path: "vault/credential.enc")
            let store = ValueStore<EncryptionKeyring, Data>
                .encryptedFile(url, identity: nil, durability: .durable, fileSystem: fileSystem)
                .coded(Codec<Credential, Data>.json)
                .provide(EncryptionKeyring(current: key))
                .default(.bob)
            try await store.save(.alice)
            try await store.update { $0.password += "!" }
            try await concurrently(20) { _ in try await store.update { $0.user += "x" } }

            let secrets = [Credential.alice.password, "alice", "password", "user"].map { Data($0.utf8) }
            for chunk in written.withLock({ $0 }) {
                for secret in secrets {
                    #expect(chunk.range(of: secret) == nil, "a write to disk contained plaintext")
                }
            }
            let everything = try FileManager.default.subpathsOfDirectory(atPath: directory.path(percentEncoded: false))
            for path in everything {
                let file = directory.appending(path: path)
                guard let data = try? Data(contentsOf: file) else { continue }
                for secret in secrets {
                    #expect(data.range(of: secret) == nil, "\(path) contains plaintext")
                }
            }
        }
    }

    @Test func filesAndDirectoriesArePrivate() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "secrets/credential.enc")
            try await ValueStore<Void, Credential>.encryptedFile(url, key: key).save(.alice)
            #expect(try url.permissions() == 0o600)
            #expect(try url.deletingLastPathComponent().permissions() == 0o700)
        }
    }

    @Test func aMissingFileIsNotFound() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<Void, Credential>.encryptedFile(directory.appending(path: "none.enc"), key: key)
            await #expect(throws: ValueStoreError.notFound) { try await store.load() }
            let optional = try await store.optional().load()
            #expect(optional == nil)
        }
    }

    @Test func aWrongKeyIsReportedAndNamesBothKeys() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            try await ValueStore<Void, Credential>.encryptedFile(url, key: key).save(.alice)
            let before = try url.bytes()
            let other = EncryptionKey.random()
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Credential>.encryptedFile(url, key: other).default(.bob).load()
            }
            #expect(error?.code == .wrongKey)
            #expect(error?.reason?.contains(key.id) == true)
            #expect(error?.reason?.contains(other.id) == true)
            await #expect(throws: ValueStoreError(.wrongKey)) {
                try await ValueStore<Void, Credential>.encryptedFile(url, key: other).update { $0.user = "mallory" }
            }
            #expect(try url.bytes() == before, "the file is left as it was")
        }
    }

    @Test func flippingAnySingleByteIsDetected() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            let store = ValueStore<Void, Credential>.encryptedFile(url, key: key)
            try await store.save(.alice)
            // Loaded once, the store remembers the file: a changed byte must still be refused.
            #expect(try await store.load() == .alice)
            let original = try url.bytes()
            var codes: [ValueStoreError.Code: Int] = [:]
            for index in original.indices {
                var damaged = original
                damaged[index] ^= 0x01
                try damaged.write(to: url)
                let error = await #expect(throws: ValueStoreError.self, "flipping byte \(index) went unnoticed") {
                    try await store.load()
                }
                #expect(error?.code != .notFound)
                if let code = error?.code { codes[code, default: 0] += 1 }
                #expect(try url.bytes() == damaged, "the damaged file is left as it was")
            }
            #expect(codes[.authenticationFailed, default: 0] > original.count / 2)
            #expect(
                Set(codes.keys) == [.corrupted, .unsupportedFormat, .authenticationFailed, .wrongKey, .itemMismatch])
            try original.write(to: url)
            #expect(try await store.load() == .alice, "the original file reads again")
        }
    }

    @Test func truncationIsReportedAsSuch() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            let store = ValueStore<Void, Credential>.encryptedFile(url, key: key)
            try await store.save(.alice)
            let original = try url.bytes()
            for length in [0, 3, 10, 43, 44, 60, original.count - 1] {
                try original.prefix(length).write(to: url)
                let error = await #expect(throws: ValueStoreError.self) { try await store.load() }
                #expect(error?.code == .corrupted, "truncated to \(length)")
                #expect(
                    length == 0 || error?.reason?.contains("truncated") == true
                        || error?.reason?.contains("VSEF") == true)
            }
            try (original + Data([0])).write(to: url)
            let trailing = await #expect(throws: ValueStoreError.self) { try await store.load() }
            #expect(trailing?.code == .corrupted)
        }
    }

    @Test func aFileCopiedFromAnotherItemFails() async throws {
        try await TemporaryDirectory.with { directory in
            let home = directory.appending(path: "home.enc")
            let work = directory.appending(path: "work.enc")
            try await ValueStore<Void, Credential>.encryptedFile(home, key: key).save(.alice)
            try await ValueStore<Void, Credential>.encryptedFile(work, key: key).save(.bob)
            try FileManager.default.removeItem(at: work)
            try FileManager.default.copyItem(at: home, to: work)
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Credential>.encryptedFile(work, key: key).load()
            }
            #expect(error?.code == .itemMismatch)
            #expect(error?.reason?.contains("'work.enc'") == true)
        }
    }

    @Test func movingTheWholeDirectoryStillWorks() async throws {
        try await TemporaryDirectory.with { directory in
            let before = directory.appending(path: "old/credential.enc")
            try await ValueStore<Void, Credential>.encryptedFile(before, key: key).save(.alice)
            try FileManager.default.moveItem(at: directory.appending(path: "old"), to: directory.appending(path: "new"))
            let after = directory.appending(path: "new/credential.enc")
            #expect(try await ValueStore<Void, Credential>.encryptedFile(after, key: key).load() == .alice)
        }
    }

    @Test func aCustomIdentityBindsTheFileToIt() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "a.enc")
            try await ValueStore<Void, Credential>.encryptedFile(url, key: key, identity: "com.example.token").save(
                .alice)
            #expect(
                try await ValueStore<Void, Credential>.encryptedFile(url, key: key, identity: "com.example.token")
                    .load() == .alice)
            await #expect(throws: ValueStoreError(.itemMismatch)) {
                try await ValueStore<Void, Credential>.encryptedFile(url, key: key).load()
            }
        }
    }

    @Test func anUnknownVersionIsReported() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            try await ValueStore<Void, Credential>.encryptedFile(url, key: key).save(.alice)
            var bytes = try url.bytes()
            bytes[4] = 2
            try bytes.write(to: url)
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Credential>.encryptedFile(url, key: key).load()
            }
            #expect(error?.code == .unsupportedFormat)
            #expect(error?.reason?.contains("version 2") == true)
        }
    }

    @Test func aPlaintextFileIsNotMistakenForAnEncryptedOne() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "credential.enc")
            try await ValueStore<Void, Credential>.jsonFile(url).save(.alice)
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Credential>.encryptedFile(url, key: key).load()
            }
            #expect(error?.code == .corrupted)
            #expect(error?.description.contains("not a ValueStore encrypted file") == true)
        }
    }

    @Test func concurrentUpdatesThroughDefaultLoseNothing() async throws {
        try await TemporaryDirectory.with { directory in
            let counter = ValueStore<Void, Int>.encryptedFile(directory.appending(path: "count.enc"), key: key).default(
                0)
            try await concurrently(200) { _ in try await counter.update { $0 += 1 } }
            #expect(try await counter.load() == 200)
        }
    }

    @Test func theEnvironmentSuppliesTheKey() async throws {
        try await TemporaryDirectory.with { directory in
            let store = ValueStore<EncryptionKey, Credential>.encryptedFile(directory.appending(path: "c.enc"))
            _ = try await store.save(.alice, key)
            #expect(try await store.load(key) == .alice)
            await #expect(throws: ValueStoreError(.wrongKey)) { try await store.load(.random()) }
        }
    }

    // MARK: - Decrypted content never reaches an error

    enum Role: String, Codable, Sendable { case admin, reader }
    struct Account: Codable, Sendable {
        var name: String
        var role: Role
    }
    /// Decodes a string and refuses it with an error of its own that quotes it.
    struct Checked: Codable, Sendable {
        struct Refused: Error { var value: String }
        init(from decoder: any Decoder) throws { throw Refused(value: try String(from: decoder)) }
    }
    /// Refuses to encode, handing the encoder's error the secret it holds.
    struct Unencodable: Codable, Sendable {
        var secret: String
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(
                secret, .init(codingPath: encoder.codingPath, debugDescription: "refusing \(secret)"))
        }
    }

    static let secret = "sk_live_51HcJ9x2eZvKYlo2C0123456789"

    /// Every way an error can be printed or inspected.
    static func everyRendering(of error: ValueStoreError) -> [String] {
        [
            error.description, error.debugDescription, String(describing: error), String(reflecting: error),
            error.localizedDescription, String(describing: error.underlyingError),
            String(reflecting: error.underlyingError), error.reason ?? "",
        ]
    }

    @Test func decodingErrorsNeverCarryDecryptedContent() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "account.enc")
            let strings = ValueStore<Void, [String: String]>.encryptedFile(url, key: key)
            try await strings.save(["name": "alice", "role": Self.secret])
            let nested = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Account>.encryptedFile(url, key: key).load()
            }
            #expect(nested?.code == .decodingFailed)
            #expect(nested?.description.contains("role") == true, "the coding path is kept")
            #expect(nested?.store?.contains("account.enc") == true)
            let updated = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Account>.encryptedFile(url, key: key).update { $0.name = "bob" }
            }
            #expect(updated?.code == .decodingFailed)

            try await ValueStore<Void, String>.encryptedFile(url, key: key).save(Self.secret)
            let topLevel = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Role>.encryptedFile(url, key: key).load()
            }
            #expect(topLevel?.code == .decodingFailed, "valid JSON of the wrong type is not corrupt")
            let custom = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Checked>.encryptedFile(url, key: key).load()
            }
            #expect(custom?.code == .decodingFailed)

            for error in [nested, updated, topLevel, custom].compactMap(\.self) {
                for rendering in Self.everyRendering(of: error) {
                    #expect(!rendering.contains("sk_live"), "decrypted content in: \(rendering)")
                }
            }
        }
    }

    @Test func encodingErrorsNeverCarryTheValue() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "secret.enc")
            let error = await #expect(throws: ValueStoreError.self) {
                try await ValueStore<Void, Unencodable>.encryptedFile(url, key: key).save(
                    Unencodable(secret: Self.secret))
            }
            #expect(error?.code == .encodingFailed)
            for rendering in error.map(Self.everyRendering) ?? [] {
                #expect(!rendering.contains("sk_live"), "the value in: \(rendering)")
            }
            #expect(!FileManager.default.fileExists(atPath: url.path(percentEncoded: false)))
        }
    }
}
