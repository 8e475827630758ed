package import ValueStoreSync

/// Requests per minute per account: a token bucket for each account that asked lately.
///
/// Each account's bucket holds up to a minute's requests and refills at the limit's rate, so an
/// account may burst up to its limit and then ask at the limit's pace. A bucket that has
/// refilled says nothing a new one would not, so buckets full for a minute are dropped, at most
/// once a minute: the limiter remembers only the accounts that asked in the last two minutes.
///
/// ```swift
/// var limiter = SyncHTTPRateLimiter(requestsPerMinute: 600)
/// if case .limited(let seconds) = limiter.admit(SyncAccount(id: "user-42"), at: .now) {
///     print("retry after \(seconds) s")
/// }
/// ```
package struct SyncHTTPRateLimiter: Sendable {
    /// Whether a request may go on.
    package enum Admission: Hashable, Sendable {
        /// It may.
        case admitted
        /// It may not; the account's next request is admitted after this many seconds.
        case limited(retryAfter: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// The requests an account may make in a minute; 0 or less admits every request.
    package let requestsPerMinute: Int
    private var buckets: [SyncAccount: Bucket] = [:]
    private var lastPrune: ContinuousClock.Instant?

    /// A limiter that admits `requestsPerMinute` requests per account and minute.
    package init(requestsPerMinute: Int) {
        self.requestsPerMinute = requestsPerMinute
    }

    /// How many accounts the limiter remembers.
    package var trackedAccounts: Int { buckets.count }

    /// Takes one request of `account`, made at `now`, or says how long it must wait.
    package mutating func admit(_ account: SyncAccount, at now: ContinuousClock.Instant) -> Admission {
        guard requestsPerMinute > 0 else { return .admitted }
        pruneIfDue(at: now)
        var bucket = buckets[account] ?? Bucket(tokens: capacity, updated: now)
        bucket.tokens = tokens(of: bucket, at: now)
        bucket.updated = now
        defer { buckets[account] = bucket }
        guard bucket.tokens >= 1 else {
            // Less a nanosecond, so a wait of exactly 20 s that floating point makes 20.000…01
            // is still 20.
            let seconds = (1 - bucket.tokens) / perSecond - 1e-9
            return .limited(retryAfter: max(1, Int(seconds.rounded(.up))))
        }
        bucket.tokens -= 1
        return .admitted
    }

    private var capacity: Double { Double(requestsPerMinute) }
    private var perSecond: Double { capacity / 60 }

    private func tokens(of bucket: Bucket, at now: ContinuousClock.Instant) -> Double {
        let elapsed = max(.zero, now - bucket.updated)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return min(capacity, bucket.tokens + seconds * perSecond)
    }

    /// Drops the buckets that have refilled, once a minute.
    private mutating func pruneIfDue(at now: ContinuousClock.Instant) {
        guard let lastPrune else {
            self.lastPrune = now
            return
        }
        guard now - lastPrune >= .seconds(60) else { return }
        self.lastPrune = now
        buckets = buckets.filter { tokens(of: $0.value, at: now) < capacity }
    }
}
