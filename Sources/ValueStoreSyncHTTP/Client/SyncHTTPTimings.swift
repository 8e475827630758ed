/// The waits of an HTTP remote that no app needs to tune and tests shorten: how its pokes
/// reconnect and fall back to long polling, and how long it waits out a 429.
struct SyncHTTPTimings: Sendable {
    /// The clock the pokes' waits are measured on (the ready timeout, the silence limit, the
    /// reconnect delays and the return to streams): a test's own clock makes them move only when
    /// the test says.
    var clock: any Clock<Duration> = ContinuousClock()
    /// How long a poke stream that already said `ready` may stay silent (no event, no heartbeat)
    /// before it is taken for dead and opened again: a little over twice the service's default
    /// heartbeat of 20 seconds.
    var silenceLimit: Duration = .seconds(45)
    /// How long a new poke stream has to say `ready` once its request was sent (the URL-session
    /// transport says when: after its warm-up); a stream that does not (a proxy that buffers it)
    /// makes the remote long-poll instead.
    var readyTimeout: Duration = .seconds(10)
    /// How long the remote long-polls after a stream failed to say `ready` before it tries a
    /// stream again.
    var serverSentEventsRetry: Duration = .seconds(5 * 60)
    /// The first wait before a failed poke request is tried again; doubled after each failure
    /// in a row, up to ``maximumReconnectDelay``.
    var reconnectDelay: Duration = .seconds(1)
    /// The longest wait between poke requests that fail.
    var maximumReconnectDelay: Duration = .seconds(60)
    /// How long a long poll asks the server to wait, in seconds.
    var longPollSeconds = 25
    /// The least time from one long poll's start to the next's, however soon the first is
    /// answered.
    var longPollSpacing: Duration = .seconds(1)
    /// The longest `Retry-After` the remote waits out; a longer one is waited this long.
    var maximumRetryAfter: Duration = .seconds(60)
    /// How many 429 answers in a row one request waits out before it fails with
    /// ``ValueStore/ValueStoreError/Code/unavailable``.
    var rateLimitedAttempts = 5

    /// The wait after `failures` failed poke requests in a row.
    func reconnectDelay(after failures: Int) -> Duration {
        var delay = reconnectDelay
        for _ in 1..<max(1, failures) where delay < maximumReconnectDelay {
            delay *= 2
        }
        return min(delay, maximumReconnectDelay)
    }
}
