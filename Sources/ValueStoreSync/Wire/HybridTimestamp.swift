/// When a change was made, on a hybrid logical clock: wall-clock milliseconds, a counter, and the
/// replica that made it.
///
/// Timestamps order changes: the later one wins under ``SyncRecord/Policy/lastWriterWins``. A
/// replica's clock never goes back and always stamps a change after everything the replica has
/// seen: its own changes, every record it pulled, and the server's time in every answer. So a
/// change made after seeing another is later than it, whatever the device's clock says. The
/// physical part is the device's clock corrected by what the server's answers taught it, so a
/// device whose clock is wrong neither wins everything nor loses everything; the server refuses
/// stamps more than a minute in its future. Equal milliseconds and counters are ordered by the
/// replica's identity, so no two stamps of two replicas are equal.
///
/// ```swift
/// let earlier = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 0, replica: ReplicaID("a"))
/// let later = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 1, replica: ReplicaID("a"))
/// earlier < later   // true
/// ```
public struct HybridTimestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970, as the replica's corrected clock read them.
    ///
    /// ```swift
    /// let date = Date(timeIntervalSince1970: Double(stamp.milliseconds) / 1_000)
    /// ```
    public var milliseconds: Int64
    /// Orders stamps within one millisecond.
    ///
    /// ```swift
    /// let sameMillisecond = earlier.milliseconds == later.milliseconds && earlier.counter < later.counter
    /// ```
    public var counter: UInt32
    /// The replica that made the stamp; breaks the last ties.
    ///
    /// ```swift
    /// let mine = stamp.replica == (try await replica.id)
    /// ```
    public var replica: ReplicaID

    /// A timestamp from its parts.
    ///
    /// ```swift
    /// let stamp = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 0, replica: ReplicaID("a"))
    /// ```
    ///
    /// - Parameters:
    ///   - milliseconds: Milliseconds since 1970.
    ///   - counter: The order within the millisecond.
    ///   - replica: The replica that made it.
    public init(milliseconds: Int64, counter: UInt32, replica: ReplicaID) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.replica = replica
    }

    /// Orders timestamps by milliseconds, then counter, then replica.
    ///
    /// ```swift
    /// if incoming.stamp > current.stamp { print("the incoming change is later") }
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: A timestamp.
    ///   - rhs: Another timestamp.
    /// - Returns: Whether `lhs` is earlier.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.milliseconds != rhs.milliseconds { return lhs.milliseconds < rhs.milliseconds }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.replica < rhs.replica
    }

    /// The stamp as `milliseconds.counter@replica`.
    ///
    /// ```swift
    /// print(stamp)   // 1700000000000.0@a
    /// ```
    public var description: String { "\(milliseconds).\(counter)@\(replica)" }
}
