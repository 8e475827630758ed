/// What a ``SyncHTTPService`` accepts from one account: request and value sizes, a request rate,
/// and how its poke streams live.
///
/// ```swift
/// var limits = SyncHTTPLimits()
/// limits.requestsPerMinutePerAccount = 1_200
/// let service = SyncHTTPService(limits: limits, remote: table.remote(for:))
/// ```
public struct SyncHTTPLimits: Sendable, Hashable {
    /// The longest request body, in bytes; a longer one is answered 413 before its body is read.
    /// 1 MiB by default.
    ///
    /// ```swift
    /// limits.maximumRequestBytes = 4 << 20
    /// ```
    public var maximumRequestBytes: Int = 1 << 20
    /// The largest value one change may carry, in bytes; a change with a larger one is answered
    /// ``/ValueStoreSync/SyncPushResponse/Outcome/rejected(_:)``, and the replica keeps it in its rejected
    /// changes. 256 KiB by default.
    ///
    /// ```swift
    /// limits.maximumValueBytes = 64 << 10
    /// ```
    public var maximumValueBytes: Int = 256 << 10
    /// How many requests one account may make in a minute; more are answered 429 with
    /// `Retry-After`. 600 by default; 0 or less turns the limit off.
    ///
    /// Each account has a bucket of this many requests that refills at this pace, so a device
    /// may send a burst of up to a minute's requests at once, then keeps the pace.
    ///
    /// ```swift
    /// limits.requestsPerMinutePerAccount = 120
    /// ```
    public var requestsPerMinutePerAccount: Int = 600
    /// How often a quiet poke stream sends a heartbeat, so proxies keep it open and the client
    /// can tell a dead stream from a quiet one. 20 seconds by default, 10 milliseconds at least.
    ///
    /// ```swift
    /// limits.pokeHeartbeat = .seconds(10)
    /// ```
    public var pokeHeartbeat: Duration = .seconds(20)
    /// How long one poke stream lives before the service ends it (the client opens another and
    /// pulls). 15 minutes by default.
    ///
    /// ```swift
    /// limits.maximumPokeStreamDuration = .seconds(300)
    /// ```
    public var maximumPokeStreamDuration: Duration = .seconds(15 * 60)

    /// The default limits.
    ///
    /// ```swift
    /// let limits = SyncHTTPLimits()
    /// ```
    public init() {}
}
