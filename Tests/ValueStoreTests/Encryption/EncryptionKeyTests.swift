import Foundation
import Testing

@testable import ValueStore

@Suite struct EncryptionKeyTests {
    @Test func randomKeysDiffer() {
        let first = EncryptionKey.random()
        let second = EncryptionKey.random()
        #expect(first != second)
        #expect(first.rawRepresentation.count == 32)
        #expect(first.id.count == 16)
    }

    @Test func keysRoundTripThroughTheirBytes() throws {
        let key = EncryptionKey.random()
        let copy = try EncryptionKey(data: key.rawRepresentation)
        #expect(copy == key)
        #expect(copy.id == key.id)
    }

    @Test(arguments: [0, 16, 31, 33, 64])
    func keysMustHave32Bytes(count: Int) {
        let error = #expect(throws: ValueStoreError.self) { try EncryptionKey(data: Data(count: count)) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.reason == "an encryption key has 32 bytes, not \(count)")
    }

    @Test func keysNeverPrintTheirBytes() {
        let key = EncryptionKey.random()
        #expect(String(describing: key) == "EncryptionKey(id: \(key.id))")
        #expect(String(reflecting: key) == "EncryptionKey(id: \(key.id))")
    }

    @Test func aKeyFileIsCreatedPrivateAndReadBack() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "keys/vault.key")
            let created = try await EncryptionKey.loadOrCreate(at: url)
            let loaded = try await EncryptionKey.loadOrCreate(at: url)
            #expect(created == loaded)
            #expect(try url.permissions() == 0o600)
            #expect(try url.deletingLastPathComponent().permissions() == 0o700)
            #expect(try url.bytes().count == 37)
        }
    }

    @Test func processesAndTasksRacingToCreateAKeyGetTheSameOne() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "vault.key")
            let keys = Locked<Set<String>>([])
            try await concurrently(50) { _ in
                let key = try await EncryptionKey.loadOrCreate(at: url)
                keys.withLock { _ = $0.insert(key.id) }
            }
            #expect(keys.withLock { $0.count } == 1)
        }
    }

    @Test func aDamagedKeyFileIsReportedNeverReplaced() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "vault.key")
            try Data("not a key".utf8).write(to: url)
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o600], ofItemAtPath: url.path(percentEncoded: false))
            let error = await #expect(throws: ValueStoreError.self) { try await EncryptionKey.loadOrCreate(at: url) }
            #expect(error?.code == .corrupted)
            #expect(try url.bytes() == Data("not a key".utf8))
        }
    }

    @Test func aKeyFileOthersCanReadIsRefused() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "vault.key")
            _ = try await EncryptionKey.loadOrCreate(at: url)
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o644], ofItemAtPath: url.path(percentEncoded: false))
            let error = await #expect(throws: ValueStoreError.self) { try await EncryptionKey.loadOrCreate(at: url) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.reason?.contains("chmod 600") == true)
        }
    }

    @Test func passphrasesDeriveTheSameKeyFromTheSameSalt() throws {
        let salt = Data(repeating: 7, count: 16)
        let first = try SecretKey.derive(passphrase: "open sesame", salt: salt, iterations: 1_000)
        let again = try SecretKey.derive(passphrase: "open sesame", salt: salt, iterations: 1_000)
        let otherSalt = try SecretKey.derive(
            passphrase: "open sesame", salt: Data(repeating: 8, count: 16), iterations: 1_000)
        let otherPassphrase = try SecretKey.derive(passphrase: "open sesame!", salt: salt, iterations: 1_000)
        #expect(first.bytes == again.bytes)
        #expect(first.bytes != otherSalt.bytes)
        #expect(first.bytes != otherPassphrase.bytes)
    }

    @Test func derivationMatchesAPublishedPBKDF2Vector() throws {
        // RFC 7914, section 11: PBKDF2-HMAC-SHA256, P = "passwd", S = "salt", c = 1, dkLen = 64.
        let key = try SecretKey.derive(passphrase: "passwd", salt: Data("salt".utf8), iterations: 1)
        #expect(
            key.bytes.map { String(format: "%02x", $0) }.joined()
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc")
    }

    @Test func weakParametersAreRefused() {
        let fewIterations = #expect(throws: ValueStoreError.self) {
            try EncryptionKey.derived(fromPassphrase: "x", salt: Data(count: 16), iterations: 1_000)
        }
        #expect(fewIterations?.code == .invalidConfiguration)
        let shortSalt = #expect(throws: ValueStoreError.self) {
            try EncryptionKey.derived(fromPassphrase: "x", salt: Data(count: 8))
        }
        #expect(shortSalt?.code == .invalidConfiguration)
    }

    @Test func aSaltFileKeepsTheSaltAndTheIterationsWithTheData() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            let key = try await EncryptionKey.derived(
                fromPassphrase: "correct horse",
                saltFile: saltFile,
                iterations: EncryptionKey.minimumIterations
            )
            #expect(try saltFile.bytes().count == 89)
            #expect(try saltFile.permissions() == 0o600)
            let again = try await EncryptionKey.derived(
                fromPassphrase: "correct horse", saltFile: saltFile, iterations: 900_000)
            #expect(again == key, "an existing salt file's own iteration count is used")
            await #expect(throws: ValueStoreError(.wrongKey), "the check value tells a wrong passphrase at once") {
                try await EncryptionKey.derived(fromPassphrase: "correct horse!", saltFile: saltFile)
            }
        }
    }

    @Test func aSaltFileFollowsTheDocumentedFormat() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            let key = try await EncryptionKey.derived(
                fromPassphrase: "correct horse", saltFile: saltFile, iterations: EncryptionKey.minimumIterations)
            let bytes = try saltFile.bytes()
            #expect(bytes.count == 89)
            #expect(bytes.prefix(4) == Data("VSKS".utf8))
            #expect(bytes[4] == 2, "format version")
            #expect(bytes[5..<9].reduce(0) { $0 << 8 | Int($1) } == EncryptionKey.minimumIterations)
            let salt = Data(bytes[9..<25])
            let expected = try EncryptionKey.derived(
                fromPassphrase: "correct horse", salt: salt, iterations: EncryptionKey.minimumIterations)
            #expect(key == expected, "the key depends only on the passphrase, the salt and the count")
            #expect(
                key.secret.isCheckValue(Data(bytes[25..<57]), for: Data("ValueStore salt file v2".utf8) + bytes[..<25]))
            #expect(Digest.sha256(Data(bytes[..<57])) == Data(bytes[57...]), "checksum")
        }
    }

    @Test func anOldSaltFileStillDerivesItsKeyAndIsNeverRewritten() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            let old = Self.versionOneSaltFile(iterations: UInt32(EncryptionKey.minimumIterations))
            try old.write(to: saltFile)
            let key = try await EncryptionKey.derived(fromPassphrase: "correct horse", saltFile: saltFile)
            let expected = try EncryptionKey.derived(
                fromPassphrase: "correct horse", salt: Data(repeating: 7, count: 16),
                iterations: EncryptionKey.minimumIterations)
            #expect(key == expected)
            #expect(try saltFile.bytes() == old)
        }
    }

    @Test func anOldSaltFileIsUpgradedByRotatingToANewOne() async throws {
        try await TemporaryDirectory.with { dataDirectory in
            let passphrase = "correct horse battery staple"
            let iterations = EncryptionKey.minimumIterations
            try Self.versionOneSaltFile(iterations: UInt32(iterations))
                .write(to: dataDirectory.appending(path: "vault.salt"))
            let before = try await EncryptionKey.derived(
                fromPassphrase: passphrase, saltFile: dataDirectory.appending(path: "vault.salt"))
            try await ValueStore<Void, String>.encryptedFile(dataDirectory.appending(path: "diary.enc"), key: before)
                .save("dear diary")

            let oldKey = try await EncryptionKey.derived(
                fromPassphrase: passphrase,
                saltFile: dataDirectory.appending(path: "vault.salt")
            )
            let newKey = try await EncryptionKey.derived(
                fromPassphrase: passphrase,
                saltFile: dataDirectory.appending(path: "vault-2.salt"),
                iterations: iterations
            )
            let keyring = EncryptionKeyring(current: newKey, previous: [oldKey])
            try await keyring.reencryptFile(at: dataDirectory.appending(path: "diary.enc"))
            try FileManager.default.removeItem(at: dataDirectory.appending(path: "vault.salt"))

            let diary = ValueStore<Void, String>.encryptedFile(dataDirectory.appending(path: "diary.enc"), key: newKey)
            #expect(try await diary.load() == "dear diary")
            #expect(try dataDirectory.appending(path: "vault-2.salt").bytes().count == 89)
        }
    }

    // MARK: - Key-file checks

    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func aKeyFileOwnedByAnotherUserIsRefused() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "vault.key")
            _ = try await EncryptionKey.loadOrCreate(at: url)
            #expect(chown(url.path(percentEncoded: false), 4242, 4242) == 0)
            let error = await #expect(throws: ValueStoreError.self) { try await EncryptionKey.loadOrCreate(at: url) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.reason?.contains("owned by") == true, "\(String(describing: error?.reason))")
        }
    }

    @Test(.enabled(if: geteuid() == 0, "only root can give a directory to another user"))
    func aKeyFileInADirectoryAnotherUserOwnsIsRefused() async throws {
        try await TemporaryDirectory.with { directory in
            let theirs = directory.appending(path: "theirs")
            let url = theirs.appending(path: "vault.key")
            _ = try await EncryptionKey.loadOrCreate(at: url)
            #expect(chown(theirs.path(percentEncoded: false), 4242, 4242) == 0)
            let error = await #expect(throws: ValueStoreError.self) { try await EncryptionKey.loadOrCreate(at: url) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.reason?.contains("directory") == true, "\(String(describing: error?.reason))")
        }
    }

    @Test func theKeyFileChecksLookAtTheFileThatWasReadNotAtThePath() async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "vault.key")
            let decoy = directory.appending(path: "decoy.key")
            try KeyFileFormat.bytes(of: .random()).write(to: url)
            try KeyFileFormat.bytes(of: .random()).write(to: decoy)
            #expect(chmod(url.path(percentEncoded: false), 0o644) == 0)
            #expect(chmod(decoy.path(percentEncoded: false), 0o600) == 0)
            var fileSystem = FileSystem.live
            fileSystem.open = { path, flags, mode in
                let descriptor = try FileSystem.live.open(path, flags, mode)
                if path.hasSuffix("/vault.key") && flags & O_ACCMODE == O_RDONLY {
                    // Once the readable file is open, a private one takes its name.
                    try FileSystem.live.rename(decoy.path(percentEncoded: false), path)
                }
                return descriptor
            }
            let error = await #expect(throws: ValueStoreError.self) {
                try await EncryptionKey.loadOrCreate(DurableFile(url, options: .private, fileSystem: fileSystem))
            }
            #expect(error?.code == .invalidConfiguration)
        }
    }

    @Test(arguments: [0o777, 0o770, 0o757])
    func aKeyFileInADirectoryOthersCanWriteIsRefused(mode: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let shared = directory.appending(path: "shared")
            let url = shared.appending(path: "vault.key")
            _ = try await EncryptionKey.loadOrCreate(at: url)
            #expect(chmod(shared.path(percentEncoded: false), mode_t(mode)) == 0)
            let existing = await #expect(throws: ValueStoreError.self) { try await EncryptionKey.loadOrCreate(at: url) }
            #expect(existing?.code == .invalidConfiguration)
            #expect(existing?.reason?.contains("directory") == true, "\(String(describing: existing?.reason))")

            try FileManager.default.removeItem(at: url)
            let before = try shared.contents()
            let new = await #expect(throws: ValueStoreError.self) { try await EncryptionKey.loadOrCreate(at: url) }
            #expect(new?.code == .invalidConfiguration)
            #expect(try shared.contents() == before, "no key is created there")
        }
    }

    @Test func aKeyFileInAStickyDirectoryIsAccepted() async throws {
        try await TemporaryDirectory.with { directory in
            let shared = directory.appending(path: "shared")
            let url = shared.appending(path: "vault.key")
            let key = try await EncryptionKey.loadOrCreate(at: url)
            #expect(chmod(shared.path(percentEncoded: false), 0o1777) == 0)
            #expect(try await EncryptionKey.loadOrCreate(at: url) == key)
        }
    }

    // MARK: - Passphrase work factor

    /// A salt file in the first format (version 1), as earlier releases wrote it.
    static func versionOneSaltFile(iterations: UInt32, salt: Data = Data(repeating: 7, count: 16)) -> Data {
        var bytes = Data("VSKS".utf8) + [1]
        withUnsafeBytes(of: iterations.bigEndian) { bytes.append(contentsOf: $0) }
        return bytes + salt
    }

    @Test func aRejectedIterationCountCreatesNoSaltFile() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            let error = await #expect(throws: ValueStoreError.self) {
                try await EncryptionKey.derived(fromPassphrase: "pw", saltFile: saltFile, iterations: 1_000)
            }
            #expect(error?.code == .invalidConfiguration)
            let contents = try directory.contents()
            #expect(contents.isEmpty, "nothing is created")
            _ = try await EncryptionKey.derived(
                fromPassphrase: "pw", saltFile: saltFile, iterations: EncryptionKey.minimumIterations)
        }
    }

    @Test(arguments: [Int.min, -1, 0, 209_999, 10_000_001, Int(UInt32.max), Int(UInt32.max) + 1, Int.max])
    func anyIterationCountOutsideTheRangeIsRefusedWithoutATrap(iterations: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            let fromFile = await #expect(throws: ValueStoreError.self) {
                try await EncryptionKey.derived(fromPassphrase: "pw", saltFile: saltFile, iterations: iterations)
            }
            #expect(fromFile?.code == .invalidConfiguration)
            let fromSalt = #expect(throws: ValueStoreError.self) {
                try EncryptionKey.derived(fromPassphrase: "pw", salt: Data(count: 16), iterations: iterations)
            }
            #expect(fromSalt?.code == .invalidConfiguration)
            let contents = try directory.contents()
            #expect(contents.isEmpty, "nothing is created")
        }
    }

    @Test(arguments: [0, 1, 209_999, 10_000_001, 0xFFFF_FFFF])
    func aStoredIterationCountOutsideTheRangeIsCorrupted(stored: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            let bytes = Self.versionOneSaltFile(iterations: UInt32(stored))
            try bytes.write(to: saltFile)
            let error = await #expect(throws: ValueStoreError.self) {
                try await EncryptionKey.derived(fromPassphrase: "pw", saltFile: saltFile)
            }
            #expect(error?.code == .corrupted)
            #expect(try saltFile.bytes() == bytes, "never replaced")
        }
    }

    @Test func aStoredIterationCountOutsideTheRangeIsCorruptedEvenWithAValidChecksum() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            _ = try await EncryptionKey.derived(
                fromPassphrase: "pw", saltFile: saltFile, iterations: EncryptionKey.minimumIterations)
            var bytes = try saltFile.bytes()
            bytes.replaceSubrange(5..<9, with: [0xFF, 0xFF, 0xFF, 0xFF])
            bytes.replaceSubrange(57..<89, with: Digest.sha256(bytes.prefix(57)))
            try bytes.write(to: saltFile)
            // 2^32 - 1 rounds of PBKDF2 would take hours: the suite's time bound is the check that
            // the count is refused before any derivation, not a clock in the test.
            let error = await #expect(throws: ValueStoreError.self) {
                try await EncryptionKey.derived(fromPassphrase: "pw", saltFile: saltFile)
            }
            #expect(error?.code == .corrupted)
        }
    }

    @Test func anEditedSaltFileIsCorruptedNeverAWrongPassphrase() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            _ = try await EncryptionKey.derived(
                fromPassphrase: "correct horse", saltFile: saltFile, iterations: EncryptionKey.minimumIterations + 1)
            let original = try saltFile.bytes()
            var lowered = original
            lowered[8] -= 1
            var salted = original
            salted[12] ^= 0x01
            for (what, edited) in [("a lowered count", lowered), ("a changed salt", salted)] {
                try edited.write(to: saltFile)
                let error = await #expect(throws: ValueStoreError.self, "\(what) went unnoticed") {
                    try await EncryptionKey.derived(fromPassphrase: "correct horse", saltFile: saltFile)
                }
                #expect(error?.code == .corrupted, "\(what)")
                #expect(try saltFile.bytes() == edited, "never replaced")
            }
            for index in original.indices {
                var damaged = original
                damaged[index] ^= 0x01
                try damaged.write(to: saltFile)
                let error = await #expect(throws: ValueStoreError.self, "flipping byte \(index) went unnoticed") {
                    try await EncryptionKey.derived(fromPassphrase: "correct horse", saltFile: saltFile)
                }
                #expect(error?.code == .corrupted || error?.code == .unsupportedFormat, "byte \(index)")
            }
        }
    }

    @Test func aWrongPassphraseIsWrongKeyBeforeAnyDataIsRead() async throws {
        try await TemporaryDirectory.with { directory in
            let saltFile = directory.appending(path: "vault.salt")
            _ = try await EncryptionKey.derived(
                fromPassphrase: "correct horse", saltFile: saltFile, iterations: EncryptionKey.minimumIterations)
            let before = try saltFile.bytes()
            let error = await #expect(throws: ValueStoreError.self) {
                try await EncryptionKey.derived(fromPassphrase: "correct horse!", saltFile: saltFile)
            }
            #expect(error?.code == .wrongKey)
            #expect(try saltFile.bytes() == before)
        }
    }
}
