import Foundation
import Testing
import ValueStore
import ValueStoreTestSupport

@testable import ValueStoreTestHelper

/// Kills a writer process with SIGKILL at random moments, mid-write more often than not, and
/// checks that the file always holds a complete value no older than the last save reported.
@Suite struct CrashConsistencyTests {
    @Test(arguments: [("json", 120), ("plist", 40), ("raw", 40), ("encrypted", 100)])
    func aKilledWriterLeavesACompleteValue(kind: String, kills: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let url = directory.appending(path: "data/payload")
            let keyFile = directory.appending(path: "keys/payload.key")
            let store: ValueStore<Void, CrashPayload> =
                switch kind {
                case "plist": .plistFile(url)
                case "raw": ValueStore<Void, Data>.file(url).coded(.json)
                case "encrypted": .encryptedFile(url, key: try await EncryptionKey.loadOrCreate(at: keyFile))
                default: .jsonFile(url)
                }
            var lastReported = 0
            var lastLoaded = 0
            for _ in 0..<kills {
                let writer = try HelperProcess(
                    "write-loop", kind, url.path(percentEncoded: false), keyFile.path(percentEncoded: false))
                // Killed after a random number of its writes returned: partway through the next.
                for _ in 0..<Int.random(in: 0...3) {
                    guard let line = await writer.nextLine() else { break }
                    lastReported = max(lastReported, Int(line) ?? 0)
                }
                writer.kill()
                lastReported = max(lastReported, writer.lines().compactMap { Int($0) }.last ?? 0)

                guard let payload = try await store.optional().load() else {
                    #expect(lastReported == 0, "a save was reported, yet the file is gone")
                    continue
                }
                #expect(payload.checksum == CrashPayload.checksum(sequence: payload.sequence, filler: payload.filler))
                #expect(payload.filler.count == CrashPayload(sequence: payload.sequence).filler.count)
                #expect(payload.sequence >= lastReported, "the file is older than a save that returned")
                #expect(payload.sequence <= max(lastReported, lastLoaded) + 1, "the file is from the future")
                lastLoaded = payload.sequence
            }
            #expect(lastLoaded > 0, "the writer never finished a save")
            let orphans = try url.deletingLastPathComponent().contents().filter { $0.contains(".tmp-") }
            #expect(orphans.count <= 1, "each writer cleans up the orphan of the one killed before it")
        }
    }
}
