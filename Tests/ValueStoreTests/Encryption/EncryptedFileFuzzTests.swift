import Foundation
import Testing
import ValueStoreTestSupport

@testable import ValueStore

/// Feeds the encrypted-file reader thousands of random, truncated, bit-flipped and spliced
/// inputs: every one must throw a typed error that is not absence, never crash, and never
/// decrypt to anything.
@Suite struct EncryptedFileFuzzTests {
    @Test func badInputGivesATypedError() throws {
        var random = SeededRandom(seed: 0xC0FFEE)
        let key = EncryptionKey.random()
        let keyring = EncryptionKeyring(current: key)
        let plaintext = Data(#"{"user":"alice","password":"correct horse"}"#.utf8)
        let valid = try EncryptedFileFormat.seal(plaintext, with: key, identity: "credential.enc")
        let other = try EncryptedFileFormat.seal(plaintext, with: key, identity: "other.enc")
        let allowed: Set<ValueStoreError.Code> = [
            .corrupted, .unsupportedFormat, .authenticationFailed, .wrongKey, .itemMismatch,
        ]

        var inputs: [(String, Data)] = (0..<valid.count).map { ("truncated to \($0)", valid.prefix($0)) }
        for _ in 0..<2_000 {
            var flipped = valid
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                flipped[Int.random(in: 0..<flipped.count, using: &random)] ^=
                    1 << UInt8.random(in: 0...7, using: &random)
            }
            inputs.append(("bit-flipped", flipped))
        }
        for _ in 0..<1_000 {
            // Random bodies behind a valid-looking prefix reach the deeper checks.
            let prefix = valid.prefix(Int.random(in: 0...44, using: &random))
            inputs.append(("random", prefix + Data(random.bytes(Int.random(in: 0...120, using: &random)))))
        }
        inputs.append(("spliced", valid.prefix(44) + other.dropFirst(44)))

        for (kind, data) in inputs {
            do {
                let opened = try EncryptedFileFormat.open(
                    data, with: keyring, identity: "credential.enc", store: "fuzz")
                // Two flips of the same bit give back the original file, which must open.
                #expect(data == valid && opened == plaintext, "a \(kind) input decrypted")
            } catch let error as ValueStoreError {
                #expect(allowed.contains(error.code), "\(kind): \(error)")
            }
        }
    }
}
