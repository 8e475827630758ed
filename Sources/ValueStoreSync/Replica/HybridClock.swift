/// A hybrid clock's reading: milliseconds and a counter, ordered as a pair.
struct ClockReading: Hashable, Comparable, Sendable, Codable {
    var milliseconds: Int64
    var counter: UInt32

    static let zero = Self(milliseconds: 0, counter: 0)

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.milliseconds, lhs.counter) < (rhs.milliseconds, rhs.counter)
    }
}

extension HybridTimestamp {
    /// The stamp's milliseconds and counter, without the replica.
    var reading: ClockReading { ClockReading(milliseconds: milliseconds, counter: counter) }
}

/// A replica's hybrid logical clock: every stamp it makes is after every stamp it made or saw
/// and after the server's time in every answer, and its physical part is the device's clock
/// corrected by the server's.
struct HybridClock: Hashable, Sendable, Codable {
    /// The highest reading made or seen: the next stamp is after it.
    var last = ClockReading.zero
    /// The highest reading seen from the server (records pulled or acknowledged, the server's
    /// time): what the clock goes back to when the server refused stamps made too far ahead.
    var seen = ClockReading.zero
    /// Milliseconds to add to the device's clock: the server's time minus the device's, as the
    /// last answer showed it.
    var offset: Int64 = 0
    /// How many times the clock went back (modulo 256; `nil`: never), kept in the top 8 bits of
    /// every counter it makes. Stamps made after going back can fall among readings made
    /// before, and must never equal one: the server takes a stamp it knows as its author's name
    /// for a change it settled, and refuses other contents under it.
    var era: UInt8?

    /// The counter bits below the era.
    private static let sequenceBits: UInt32 = 24
    private static let sequenceMask: UInt32 = (1 << sequenceBits) - 1

    /// A new stamp for `replica`, after everything made or seen, reading the device's clock at
    /// `now` (milliseconds since 1970). Its counter carries the clock's era.
    mutating func stamp(now: Int64, replica: ReplicaID) -> HybridTimestamp {
        let physical = now + offset
        let era = UInt32(self.era ?? 0)
        let first = era << Self.sequenceBits
        let lastEra = last.counter >> Self.sequenceBits
        if physical > last.milliseconds {
            last = ClockReading(milliseconds: physical, counter: first)
        } else if lastEra < era {
            last.counter = first  // after `last`, in this era
        } else if lastEra == era && last.counter & Self.sequenceMask < Self.sequenceMask {
            last.counter += 1
        } else {
            last = ClockReading(milliseconds: last.milliseconds + 1, counter: first)
        }
        return HybridTimestamp(milliseconds: last.milliseconds, counter: last.counter, replica: replica)
    }

    /// A new stamp for `replica`, as ``stamp(now:replica:)``, and after `floor` too (the
    /// stamps of the records of the key it is for, which the clock may have gone back below).
    mutating func stamp(
        now: Int64,
        replica: ReplicaID,
        after floor: some Sequence<HybridTimestamp>
    ) -> HybridTimestamp {
        last = floor.map(\.reading).reduce(last, max)
        return stamp(now: now, replica: replica)
    }

    /// Takes in a stamp made elsewhere, or acknowledged by the server.
    mutating func observe(_ stamp: HybridTimestamp) {
        observe(stamp.reading)
    }

    /// Takes in a reading made elsewhere.
    mutating func observe(_ reading: ClockReading) {
        last = max(last, reading)
        seen = max(seen, reading)
    }

    /// Takes in the server's time from an answer, read when the device's clock said `now`: the
    /// offset follows the server, and the next stamp is after the server's time.
    mutating func observe(serverTime: Int64, now: Int64) {
        offset = serverTime - now
        observe(ClockReading(milliseconds: serverTime, counter: 0))
    }

    /// Forgets the stamps made too far ahead, which the server refused: the next stamps follow
    /// what was seen, up to the server's time at most, and `kept` (stamps still in use, not
    /// refused). What was seen past the server's time is a record stamped in its future (by a
    /// server clock that was ahead, then corrected): a stamp for another key need not follow
    /// it, and one for its key is made after it (``stamp(now:replica:after:)``).
    ///
    /// A new era begins: the stamps made from now on differ from every one made before, even at
    /// the same milliseconds.
    mutating func goBack(keeping kept: some Sequence<HybridTimestamp>, serverTime: Int64) {
        let known = min(seen, ClockReading(milliseconds: serverTime, counter: 0))
        last = kept.map(\.reading).reduce(known, max)
        era = (era ?? 0) &+ 1
    }
}
