import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// The in-memory server's index of its records by version, which answers a pull page from the
/// records it returns instead of a sort of every record.
@Suite struct SyncVersionIndexTests {
    /// Pages of 20 and pushes of 20.
    static func options() -> SyncOptions {
        var options = SyncSandbox.options()
        options.pushBatchSize = 20
        options.pullPageSize = 20
        return options
    }

    @Test func theServerIndexesItsRecordsOnceForPushesAndPulls() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone", options: Self.options())
            let laptop = try sandbox.replica("laptop", options: Self.options())
            try await syncInTurn(phone, laptop)
            // Each round writes again the keys of the one before, and some more.
            for round in 0..<3 {
                let values = Dictionary(
                    uniqueKeysWithValues: (0..<(100 + 50 * round)).map { ("key\($0)", Data("\(round)".utf8)) })
                try await phone.change(values, policy: .lastWriterWins)
                try await syncInTurn(phone, laptop)
            }
            // Each page answered from the index the first pull built, kept by every push since.
            #expect(sandbox.server.indexRebuilds(of: sandbox.account) == 1)
            let server = try #require(sandbox.server.state(of: sandbox.account))
            #expect(server.records.count == 200)
            for (key, record) in server.records {
                #expect(laptop.record(for: key)?.value == record.record.value)
            }
            #expect(laptop.status.pendingChanges == 0)
        }
    }
}
