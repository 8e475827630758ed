import Foundation
import Testing
import ValueStoreSync

/// The wire types: their order, and their `Codable` forms round trip, so a transport is a thin
/// layer.
@Suite(.timeLimit(.minutes(2))) struct WireTests {
    @Test func timestampsOrderByTimeThenCounterThenReplica() {
        let a = ReplicaID("a")
        let b = ReplicaID("b")
        #expect(
            HybridTimestamp(milliseconds: 1, counter: 9, replica: b)
                < HybridTimestamp(milliseconds: 2, counter: 0, replica: a))
        #expect(
            HybridTimestamp(milliseconds: 1, counter: 0, replica: b)
                < HybridTimestamp(milliseconds: 1, counter: 1, replica: a))
        #expect(
            HybridTimestamp(milliseconds: 1, counter: 0, replica: a)
                < HybridTimestamp(milliseconds: 1, counter: 0, replica: b))
        #expect(ServerVersion(1) < ServerVersion(2))
        #expect(ServerVersion.zero == ServerVersion(0))
    }

    @Test func requestsAndResponsesRoundTripThroughJSON() throws {
        let stamp = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 3, replica: ReplicaID("phone"))
        let record = SyncRecord(
            key: "theme", value: Data(#""dark""#.utf8), stamp: stamp, base: nil, policy: .saveBeatsRemove,
            version: ServerVersion(4))
        let epoch = UUID()
        let push = SyncPushRequest(
            account: "user-42", replica: ReplicaID("phone"), epoch: epoch, seen: ServerVersion(4),
            cursor: ServerVersion(3), changes: [record])
        let answer = SyncPushResponse(
            epoch: epoch, serverTime: 1, refusal: nil,
            outcomes: [
                .accepted(ServerVersion(5)), .overtaken(record), .lost(nil), .mergeNeeded(record), .superseded,
                .tooFarAhead, .rejected("why"),
            ])
        let pull = SyncPullRequest(
            account: "user-42", replica: ReplicaID("phone"), epoch: nil, cursor: .zero, seen: .zero, limit: 10,
            isResync: true, archivedAfter: ServerVersion(2))
        let page = SyncPullResponse(
            epoch: epoch, serverTime: 2, refusal: .restored, records: [record],
            conflicts: [SyncConflict(key: "theme", value: nil, stamp: stamp, cause: .lost, winner: stamp)],
            cursor: ServerVersion(4), head: ServerVersion(4), horizon: .zero, isComplete: true)
        #expect(try roundTrip(push) == push)
        #expect(try roundTrip(answer) == answer)
        #expect(try roundTrip(pull) == pull)
        #expect(try roundTrip(page) == page)
        // Identities and versions are plain values on the wire.
        #expect(String(decoding: try JSONEncoder().encode(ServerVersion(7)), as: UTF8.self) == "7")
        #expect(String(decoding: try JSONEncoder().encode(ReplicaID("a")), as: UTF8.self) == #""a""#)
    }

    /// Answers carry the names of the changes they settle and the account of a page; an answer
    /// from a server that predates them decodes without them.
    @Test func answersNameWhatTheySettleAndOlderAnswersStillDecode() throws {
        let stamp = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 3, replica: ReplicaID("phone"))
        let epoch = UUID()
        let answer = SyncPushResponse(
            epoch: epoch, serverTime: 1, refusal: nil, outcomes: [.accepted(ServerVersion(5))],
            settled: [SyncChangeName(key: "theme", stamp: stamp)])
        let page = SyncPullResponse(
            epoch: epoch, serverTime: 2, refusal: nil, records: [], conflicts: [], cursor: ServerVersion(4),
            head: ServerVersion(4), horizon: .zero, isComplete: true, account: "user-42")
        #expect(try roundTrip(answer) == answer)
        #expect(try roundTrip(page) == page)
        let json = String(decoding: try JSONEncoder().encode(answer), as: UTF8.self)
        #expect(json.contains(#""settled":[{"#))

        let older = #"{"epoch":"\#(epoch.uuidString)","serverTime":1,"outcomes":[{"accepted":{"_0":5}}]}"#
        let decoded = try JSONDecoder().decode(SyncPushResponse.self, from: Data(older.utf8))
        #expect(decoded.settled == nil && decoded.outcomes == [.accepted(ServerVersion(5))])
        let olderPage =
            #"{"epoch":"\#(epoch.uuidString)","serverTime":2,"records":[],"conflicts":[],"cursor":4,"head":4,"#
            + #""horizon":0,"isComplete":true}"#
        #expect(try JSONDecoder().decode(SyncPullResponse.self, from: Data(olderPage.utf8)).account == nil)
    }

    func roundTrip<Value: Codable>(_ value: Value) throws -> Value {
        try JSONDecoder().decode(Value.self, from: JSONEncoder().encode(value))
    }
}
