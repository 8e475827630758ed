import Testing

@testable import ValueStoreSync

@Suite(.timeLimit(.minutes(2))) struct HybridClockTests {
    static let phone = ReplicaID("phone")

    /// Seen in the chaos test (seed 779): a device 400 s ahead made two changes, both refused as
    /// too far ahead and stamped again; reopened, its clock went up to the refused stamps it
    /// archived, and its next change took the second refused stamp, which the server knew as
    /// another change's name, and was rejected.
    @Test func stampsMadeAfterGoingBackNeverRepeatOneMadeBefore() {
        var clock = HybridClock()
        let ahead: Int64 = 1_000_400_000
        let refused = [clock.stamp(now: ahead, replica: Self.phone), clock.stamp(now: ahead, replica: Self.phone)]
        clock.observe(serverTime: 1_000_000_000, now: ahead)
        clock.goBack(keeping: [], serverTime: 1_000_000_000)
        let restamped = clock.stamp(now: ahead, replica: Self.phone)
        #expect(restamped.milliseconds < refused[0].milliseconds)
        // Reopened: the archived refused stamps raise the clock to them.
        clock.observe(refused[0])
        var made = Set(refused + [restamped])
        for _ in 0..<5 {
            let stamp = clock.stamp(now: ahead, replica: Self.phone)
            #expect(!made.contains(stamp))
            #expect(stamp > refused[0])
            made.insert(stamp)
        }
    }

    @Test func aStampIsAfterEverythingSeenWhateverItsEra() {
        var clock = HybridClock()
        clock.goBack(keeping: [], serverTime: 0)
        clock.goBack(keeping: [], serverTime: 0)  // era 2
        let other = HybridTimestamp(milliseconds: 500, counter: 3 << 24 | 7, replica: ReplicaID("laptop"))
        clock.observe(other)
        let next = clock.stamp(now: 100, replica: Self.phone)
        #expect(next.reading > other.reading)
        #expect(next.counter >> 24 == 2)
        let older = HybridTimestamp(milliseconds: 800, counter: 9, replica: ReplicaID("laptop"))
        clock.observe(older)
        let after = clock.stamp(now: 100, replica: Self.phone)
        #expect(after.reading > older.reading && after.milliseconds == 800 && after.counter == 2 << 24)
    }
}
