import Foundation
import Testing
import ValueStore
import ValueStoreSync

/// Keys that differ only in Unicode normalization are one key on the device and on the server,
/// kept in their canonical composition (NFC), whichever spelling a store used.
@Suite struct KeyNormalizationTests {
    static let composed = "caf\u{e9}"
    static let decomposed = "cafe\u{301}"

    @Test func twoSpellingsOfAKeyAreOneKeyInItsComposedForm() async throws {
        #expect(Array(Self.composed.utf8) != Array(Self.decomposed.utf8))
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            let laptop = try sandbox.replica("laptop")
            try await syncInTurn(phone, laptop)
            // A concurrent create under both spellings: the later one wins, the other is archived.
            try await phone.store(Self.decomposed, as: String.self).save("the phone's")
            try await waitForALaterStamp()
            try await laptop.store(Self.composed, as: String.self).save("the laptop's")
            try await syncInTurn(phone, laptop, phone)

            let records = try #require(sandbox.server.state(of: sandbox.account)?.records)
            #expect(records.count == 1)
            #expect(records.values.map { Array($0.record.key.utf8) } == [Array(Self.composed.utf8)])
            #expect(try await phone.store(Self.decomposed, as: String.self).load() == "the laptop's")
            #expect(try await laptop.store(Self.decomposed, as: String.self).load() == "the laptop's")
            #expect(try await phone.store(Self.composed, as: String.self).load() == "the laptop's")
            let archived = try await sandbox.server.archivedConflicts(for: sandbox.account)
            #expect(archived.map(\.value) == [json("the phone's")])
            #expect(archived.allSatisfy { Array($0.key.utf8) == Array(Self.composed.utf8) })
            #expect(try await phone.archivedConflicts().map(\.value) == [json("the phone's")])
        }
    }

    /// A replica that predates the rule may push a key in another spelling: the server keeps it
    /// in its composed form, on the same record, and names the outcome by it.
    @Test func aServerComposesTheKeyOfAChangeSentInAnotherSpelling() async throws {
        try await SyncSandbox.with { sandbox in
            let phone = try sandbox.replica("phone")
            try await phone.store(Self.composed, as: String.self).save("first")
            try await phone.syncNow()
            let current = try #require(phone.record(for: Self.composed))
            let epoch = try #require(sandbox.server.state(of: sandbox.account)?.row.epoch)
            let older = ReplicaID("older")
            let change = SyncRecord(
                key: Self.decomposed, value: json("sent decomposed"),
                stamp: HybridTimestamp(milliseconds: current.stamp.milliseconds + 1, counter: 0, replica: older),
                base: current.identity, policy: .lastWriterWins)
            let answer = try await sandbox.server.remote(for: sandbox.account).push(
                SyncPushRequest(
                    account: sandbox.account.id, replica: older, epoch: epoch, seen: .zero, cursor: .zero,
                    changes: [change]))
            #expect(answer.settled?.map { Array($0.key.utf8) } == [Array(Self.composed.utf8)])
            let records = try #require(sandbox.server.state(of: sandbox.account)?.records)
            #expect(records.values.map { Array($0.record.key.utf8) } == [Array(Self.composed.utf8)])
            #expect(records.values.map(\.record.value) == [json("sent decomposed")])
        }
    }
}
