import Testing
import ValueStoreSync
import ValueStoreSyncHTTP

/// The token buckets behind 429: a minute's requests at once, then the limit's pace, and only
/// the accounts that asked lately remembered.
@Suite struct SyncHTTPRateLimiterTests {
    let start = ContinuousClock.now

    @Test func anAccountMayBurstItsMinuteThenWaits() {
        var limiter = SyncHTTPRateLimiter(requestsPerMinute: 60)
        for _ in 0..<60 {
            #expect(limiter.admit(SyncAccount(id: "user-42"), at: start) == .admitted)
        }
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start) == .limited(retryAfter: 1))
        #expect(limiter.admit(SyncAccount(id: "user-7"), at: start) == .admitted)
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start + .seconds(1)) == .admitted)
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start + .seconds(1)) == .limited(retryAfter: 1))
    }

    @Test func retryAfterIsTheWaitForTheNextRequestInWholeSeconds() {
        var limiter = SyncHTTPRateLimiter(requestsPerMinute: 2)
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start) == .admitted)
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start) == .admitted)
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start) == .limited(retryAfter: 30))
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start + .seconds(10)) == .limited(retryAfter: 20))
        #expect(limiter.admit(SyncAccount(id: "user-42"), at: start + .seconds(30)) == .admitted)
    }

    @Test func accountsWhoseBucketsRefilledAreForgottenOnceAMinute() {
        var limiter = SyncHTTPRateLimiter(requestsPerMinute: 60)
        for index in 0..<1_000 {
            _ = limiter.admit(SyncAccount(id: "user-\(index)"), at: start)
        }
        for _ in 0..<60 {
            _ = limiter.admit(SyncAccount(id: "user-0"), at: start + .seconds(30))
        }
        #expect(limiter.trackedAccounts == 1_000)
        #expect(limiter.admit(SyncAccount(id: "user-new"), at: start + .seconds(61)) == .admitted)
        #expect(limiter.trackedAccounts == 2)  // user-0, still refilling, and user-new
        #expect(limiter.admit(SyncAccount(id: "user-0"), at: start + .seconds(61)) == .admitted)
    }

    @Test func noLimitAdmitsEverything() {
        var limiter = SyncHTTPRateLimiter(requestsPerMinute: 0)
        for _ in 0..<1_000 {
            #expect(limiter.admit(SyncAccount(id: "user-42"), at: start) == .admitted)
        }
        #expect(limiter.trackedAccounts == 0)
    }
}
