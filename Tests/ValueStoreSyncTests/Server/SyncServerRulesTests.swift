import Foundation
import Testing

@testable import ValueStoreSync

/// Each of the server's rules, as the pure functions both servers run.
@Suite(.timeLimit(.minutes(2))) struct SyncServerRulesTests {
    static let phone = ReplicaID("phone")
    static let laptop = ReplicaID("laptop")
    static let now: Int64 = 1_700_000_000_000

    static func stamp(_ milliseconds: Int64, _ replica: ReplicaID = phone, counter: UInt32 = 0) -> HybridTimestamp {
        HybridTimestamp(milliseconds: now + milliseconds, counter: counter, replica: replica)
    }

    static func change(
        _ value: String?,
        at stamp: HybridTimestamp,
        on base: HybridTimestamp? = nil,
        _ policy: SyncRecord.Policy = .lastWriterWins
    ) -> SyncRecord {
        SyncRecord(key: "k", value: value.map { Data($0.utf8) }, stamp: stamp, base: base, policy: policy)
    }

    static func stored(_ record: SyncRecord, at version: Int64, by writer: ReplicaID = laptop) -> SyncServerRecord {
        var record = record
        record.version = ServerVersion(version)
        return SyncServerRecord(record: record, writer: writer)
    }

    static func decide(
        _ change: SyncRecord,
        from pusher: ReplicaID = phone,
        over current: SyncServerRecord? = nil,
        entry: SyncIdempotencyEntry? = nil
    ) -> SyncServerRules.PushDecision {
        SyncServerRules.decide(
            change, from: pusher, current: current, entry: entry, version: ServerVersion(10), serverTime: now)
    }

    // MARK: Every policy

    @Test(arguments: SyncRecord.Policy.allCases)
    func aChangeMadeOnTheCurrentRecordApplies(policy: SyncRecord.Policy) {
        let current = Self.stored(Self.change("a", at: Self.stamp(-50, Self.laptop), policy), at: 3)
        let decision = Self.decide(
            Self.change("b", at: Self.stamp(-100), on: current.record.stamp, policy), over: current)
        // Even with an earlier stamp: it was made after seeing the record.
        #expect(decision.outcome == .accepted(ServerVersion(10)))
        #expect(decision.write?.record.value == Data("b".utf8))
        #expect(decision.write?.version == ServerVersion(10))
        #expect(decision.archive == nil)
        #expect(SyncServerRules.bumpsHead(decision))
    }

    @Test(arguments: SyncRecord.Policy.allCases)
    func aChangeOnNothingOverNoRecordApplies(policy: SyncRecord.Policy) {
        let decision = Self.decide(Self.change("a", at: Self.stamp(0), policy))
        #expect(decision.outcome == .accepted(ServerVersion(10)))
    }

    @Test(arguments: SyncRecord.Policy.allCases)
    func aRepeatAnswersTheRecordedOutcomeAndWritesNothing(policy: SyncRecord.Policy) {
        let change = Self.change("a", at: Self.stamp(0), policy)
        let first = Self.decide(change)
        let current = try! #require(first.write)
        let repeated = Self.decide(change, over: current, entry: first.idempotency)
        #expect(repeated.outcome == .accepted(ServerVersion(10)))
        #expect(repeated.write == nil && repeated.archive == nil)
        // Replaced since by a later record: the repeat is told about it.
        let later = Self.stored(Self.change("b", at: Self.stamp(5, Self.laptop), on: change.stamp, policy), at: 11)
        #expect(Self.decide(change, over: later, entry: first.idempotency).outcome == .overtaken(later.record))
    }

    @Test func aRepeatedStampWithOtherContentIsRejected() {
        let change = Self.change("a", at: Self.stamp(0))
        let first = Self.decide(change)
        let copy = Self.change("not a", at: change.stamp)
        let decision = Self.decide(copy, over: first.write, entry: first.idempotency)
        guard case .rejected = decision.outcome else {
            Issue.record("expected a rejection, got \(decision.outcome)")
            return
        }
        #expect(decision.write == nil && decision.idempotency == nil)
    }

    @Test func anOlderChangeThanItsAuthorsLastIsSettledByIt() {
        let first = Self.decide(Self.change("new", at: Self.stamp(10)))
        let late = Self.decide(Self.change("old", at: Self.stamp(5)), over: first.write, entry: first.idempotency)
        #expect(late.outcome == .overtaken(first.write!.record))
        #expect(late.write == nil && late.archive == nil)
        // Its removal since collected: nothing to show.
        #expect(Self.decide(Self.change("old", at: Self.stamp(5)), entry: first.idempotency).outcome == .superseded)
    }

    @Test func aChangeMadeOnItsAuthorsLastAppliesWhateverItsStamp() {
        // Stamped again below its own earlier change after a clock ran ahead: it replaces that
        // change, which it names, so it is the later one.
        let first = Self.decide(Self.change("first", at: Self.stamp(30_000)))
        var restamped = Self.change("second", at: Self.stamp(2))
        restamped.origin = Self.stamp(600_000)
        restamped.replaces = [Self.stamp(30_000)]
        let decision = Self.decide(restamped, over: first.write, entry: first.idempotency)
        #expect(decision.outcome == .accepted(ServerVersion(10)))
        #expect(decision.write?.record.value == Data("second".utf8))
        #expect(decision.archive == nil)
    }

    @Test func aChangeTheCurrentRecordWasMadeOnIsSettled() {
        // A copy of the phone's folder replaced the phone's pending change and pushed first.
        let replaced = Self.change("copied", at: Self.stamp(1))
        let current = Self.stored(
            SyncRecord(
                key: "k", value: nil, stamp: Self.stamp(2, Self.laptop), base: nil, replaces: [replaced.stamp],
                policy: .saveBeatsRemove), at: 4)
        let decision = Self.decide(replaced, over: current)
        #expect(decision.outcome == .overtaken(current.record))
        #expect(decision.write == nil && decision.archive == nil)
        // And a change made on one it replaces applies.
        let later = SyncRecord(
            key: "k", value: Data(), stamp: Self.stamp(3), base: nil, replaces: [current.record.stamp],
            policy: .compareAndSet)
        #expect(Self.decide(later, over: current).outcome == .accepted(ServerVersion(10)))
    }

    @Test func aStampTooFarInTheFutureIsRefusedUntilRestamped() {
        #expect(Self.decide(Self.change("a", at: Self.stamp(60_001))).outcome == .tooFarAhead)
        #expect(Self.decide(Self.change("a", at: Self.stamp(60_000))).outcome == .accepted(ServerVersion(10)))
    }

    @Test func theSameAuthorSawItsOwnEarlierRecord() {
        // The phone's first change applied, its acknowledgement was lost, and it made another on
        // the same base: not concurrent with its own.
        let base = Self.stamp(-1_000, Self.laptop)
        let own = Self.stored(Self.change("1", at: Self.stamp(0), on: base, .compareAndSet), at: 4, by: Self.laptop)
        let decision = Self.decide(Self.change("2", at: Self.stamp(10), on: base, .compareAndSet), over: own)
        #expect(decision.outcome == .accepted(ServerVersion(10)))
    }

    // MARK: Concurrent changes, by policy

    @Test func lastWriterWinsByStampAndArchivesTheLoser() {
        let current = Self.stored(Self.change("laptop", at: Self.stamp(5, Self.laptop)), at: 3)
        let later = Self.decide(Self.change("phone", at: Self.stamp(6)), over: current)
        #expect(later.outcome == .accepted(ServerVersion(10)))
        #expect(later.archive?.conflict.value == Data("laptop".utf8))
        #expect(later.archive?.writer == Self.laptop)
        #expect(later.archive?.version == ServerVersion(10))

        let earlier = Self.decide(Self.change("phone", at: Self.stamp(4)), over: current)
        #expect(earlier.outcome == .lost(current.record))
        #expect(earlier.write == nil)
        #expect(earlier.archive?.conflict.value == Data("phone".utf8))
        #expect(earlier.archive?.writer == Self.phone)
        #expect(earlier.idempotency?.outcome == .lost)
        #expect(!SyncServerRules.bumpsHead(earlier))
        // The answer tells the phone; only a displaced record reaches its writer by pulls.
        #expect(earlier.archive?.isPulled == false)
        #expect(later.archive?.isPulled == true)
    }

    @Test func aRemovalThatLosesToARemovalIsNotArchived() {
        let current = Self.stored(Self.change(nil, at: Self.stamp(5, Self.laptop)), at: 3)
        let decision = Self.decide(Self.change(nil, at: Self.stamp(4)), over: current)
        #expect(decision.outcome == .overtaken(current.record))
        #expect(decision.archive == nil)
    }

    @Test func saveBeatsRemoveKeepsSavesOverRemovalsTheyDidNotSee() {
        let removal = Self.stored(Self.change(nil, at: Self.stamp(9, Self.laptop), .saveBeatsRemove), at: 3)
        let save = Self.decide(Self.change("kept", at: Self.stamp(1), .saveBeatsRemove), over: removal)
        #expect(save.outcome == .accepted(ServerVersion(10)))
        #expect(save.archive?.conflict.value == nil)

        let saved = Self.stored(Self.change("kept", at: Self.stamp(1, Self.laptop), .saveBeatsRemove), at: 3)
        let remove = Self.decide(Self.change(nil, at: Self.stamp(9), .saveBeatsRemove), over: saved)
        #expect(remove.outcome == .lost(saved.record))

        let seen = Self.decide(
            Self.change(nil, at: Self.stamp(9), on: saved.record.stamp, .saveBeatsRemove), over: saved)
        #expect(seen.outcome == .accepted(ServerVersion(10)))

        // Two saves: by stamp.
        let other = Self.decide(Self.change("later", at: Self.stamp(2), .saveBeatsRemove), over: saved)
        #expect(other.outcome == .accepted(ServerVersion(10)))
    }

    @Test func compareAndSetLosesOverAnyOtherRecord() {
        let current = Self.stored(Self.change("7", at: Self.stamp(1, Self.laptop), .compareAndSet), at: 3)
        let decision = Self.decide(
            Self.change("6", at: Self.stamp(9), on: Self.stamp(-5, Self.laptop), .compareAndSet), over: current)
        #expect(decision.outcome == .lost(current.record))
        #expect(decision.archive?.conflict.value == Data("6".utf8))
        // Made on a record whose removal was collected: nothing to compare with, so it loses.
        let orphan = Self.decide(Self.change("6", at: Self.stamp(9), on: Self.stamp(-5, Self.laptop), .compareAndSet))
        #expect(orphan.outcome == .lost(nil))
    }

    @Test func mergeAsksForAMergeAndArchivesNothing() {
        let current = Self.stored(Self.change("b", at: Self.stamp(1, Self.laptop), .merge), at: 3)
        let decision = Self.decide(
            Self.change("c", at: Self.stamp(9), on: Self.stamp(-5, Self.laptop), .merge), over: current)
        #expect(decision.outcome == .mergeNeeded(current.record))
        #expect(decision.write == nil && decision.archive == nil && decision.idempotency == nil)
        #expect(!SyncServerRules.bumpsHead(decision))
    }

    // MARK: Refusals, pages, progress, collection

    @Test func refusals() {
        let epoch = UUID()
        let row = SyncAccountRow(epoch: epoch, head: ServerVersion(20), horizon: ServerVersion(5))
        let progress = SyncReplicaProgress(cursor: ServerVersion(10), seen: ServerVersion(12))
        func refusal(
            epoch asked: UUID?, seen: Int64 = 12, cursor: Int64 = 10, isPush: Bool = false, isResync: Bool = false
        ) -> SyncRefusal? {
            SyncServerRules.refusal(
                account: row, epoch: asked, seen: ServerVersion(seen), progress: progress,
                cursor: ServerVersion(cursor),
                isPush: isPush, isResync: isResync)
        }
        #expect(refusal(epoch: epoch) == nil)
        #expect(refusal(epoch: UUID()) == .epochChanged)
        #expect(refusal(epoch: nil) == nil)
        #expect(refusal(epoch: nil, isPush: true) == .epochChanged)
        #expect(refusal(epoch: epoch, seen: 13) == .restored)
        #expect(refusal(epoch: epoch, seen: 13, isResync: true) == nil)
        #expect(refusal(epoch: epoch, cursor: 4) == .resyncNeeded)
        #expect(refusal(epoch: epoch, cursor: 4, isResync: true) == nil)
        #expect(
            SyncServerRules.refusal(
                account: row, epoch: epoch, seen: ServerVersion(1), progress: nil, cursor: ServerVersion(5),
                isPush: true,
                isResync: false) == .restored)
    }

    @Test func pagesEndAtTheHeadOrAtTheirLastRecord() {
        let records = (1...3).map { version in
            var record = Self.change("\(version)", at: Self.stamp(Int64(version)))
            record.version = ServerVersion(Int64(version))
            return record
        }
        #expect(SyncServerRules.page(of: records, limit: 3, head: ServerVersion(9)) == (ServerVersion(3), false))
        #expect(SyncServerRules.page(of: records, limit: 4, head: ServerVersion(9)) == (ServerVersion(9), true))
        #expect(SyncServerRules.page(of: records, limit: 3, head: ServerVersion(3)) == (ServerVersion(3), true))
    }

    @Test func progressKeepsTheHighestCursorAndVersionGiven() {
        let before = SyncReplicaProgress(cursor: ServerVersion(4), seen: ServerVersion(9))
        let after = SyncServerRules.progress(before, cursor: ServerVersion(3), given: [ServerVersion(12)])
        #expect(after == SyncReplicaProgress(cursor: ServerVersion(4), seen: ServerVersion(12)))
        #expect(
            SyncServerRules.versions(in: [.accepted(ServerVersion(3)), .tooFarAhead, .lost(nil)]) == [ServerVersion(3)])
    }

    @Test func removalsAreCollectedOnlyBelowEveryCursorAndWhenOld() {
        var removal = Self.change(nil, at: Self.stamp(0))
        removal.version = ServerVersion(5)
        #expect(SyncServerRules.isCollectable(removal, lowestCursor: ServerVersion(5), olderThan: Self.now))
        #expect(!SyncServerRules.isCollectable(removal, lowestCursor: ServerVersion(4), olderThan: Self.now))
        #expect(!SyncServerRules.isCollectable(removal, lowestCursor: ServerVersion(9), olderThan: Self.now - 1))
        var save = removal
        save.value = Data()
        #expect(!SyncServerRules.isCollectable(save, lowestCursor: ServerVersion(9), olderThan: Self.now))
    }

    @Test func theDigestCoversValueRemovalBaseAndPolicy() {
        let change = Self.change("a", at: Self.stamp(0))
        let digest = SyncServerRules.digest(of: change)
        #expect(digest.count == 16)
        #expect(SyncServerRules.digest(of: Self.change("b", at: Self.stamp(0))) != digest)
        #expect(SyncServerRules.digest(of: Self.change(nil, at: Self.stamp(0))) != digest)
        #expect(
            SyncServerRules.digest(of: Self.change("", at: Self.stamp(0)))
                != SyncServerRules.digest(of: Self.change(nil, at: Self.stamp(0))))
        #expect(SyncServerRules.digest(of: Self.change("a", at: Self.stamp(0), on: Self.stamp(-1))) != digest)
        #expect(SyncServerRules.digest(of: Self.change("a", at: Self.stamp(0), .merge)) != digest)
        // The stamp is the key, not the content.
        #expect(SyncServerRules.digest(of: Self.change("a", at: Self.stamp(7))) == digest)
    }
}
