/// How ``ValueStoreSync/SyncRemote/http(_:account:options:token:)`` talks to its server: how it hears of
/// changes, how long a request may take, and what carries its requests.
///
/// ```swift
/// var options = SyncHTTPOptions()
/// options.pokes = .longPolling
/// options.requestTimeout = .seconds(15)
/// let remote = SyncRemote.http(url, account: account, options: options) { rejected in
///     try await auth.token(refreshing: rejected)
/// }
/// ```
public struct SyncHTTPOptions: Sendable {
    /// How the remote hears that its account changed on the server.
    ///
    /// ```swift
    /// options.pokes = .none   // SyncReplica.run() polls on its slow timer
    /// ```
    public enum Pokes: Sendable, Hashable {
        /// A stream of server-sent events (`GET v1/pokes`); long polling while the stream
        /// cannot be opened, and the stream again later.
        case serverSentEvents
        /// Requests that wait for a change (`GET v1/pokes?wait=…`), one after another.
        case longPolling
        /// No pokes: ``/ValueStoreSync/SyncReplica/run()`` polls on its slow timer.
        case none
    }

    /// How the remote hears of changes; server-sent events by default.
    ///
    /// ```swift
    /// options.pokes = .longPolling
    /// ```
    public var pokes: Pokes = .serverSentEvents
    /// How long one push or pull may take before it fails (a push then with
    /// ``/ValueStore/ValueStoreError/Code/outcomeUnknown``); 30 seconds by default.
    ///
    /// ```swift
    /// options.requestTimeout = .seconds(10)
    /// ```
    public var requestTimeout: Duration = .seconds(30)
    /// What carries the requests: by default, ``SyncHTTPTransport/urlSession()``, sessions of
    /// its own that keep no cookies and no cache.
    ///
    /// ```swift
    /// options.transport = .urlSession(.ephemeral)
    /// ```
    public var transport: SyncHTTPTransport = .urlSession()
    /// Whether plain `http://` may reach a host other than this machine. Off by default: a token
    /// sent in clear text to another host can be read on the way.
    ///
    /// ```swift
    /// options.allowsInsecureHTTP = true   // a test network without TLS
    /// ```
    public var allowsInsecureHTTP = false
    /// The longest push request the remote sends, in bytes of JSON; 1 MiB by default, the
    /// service's own default limit. A longer push goes as several, each under it, whose answers
    /// are merged in order; a push a proxy refuses as too large (413) is halved and sent again.
    /// A change too large to go alone is settled as
    /// ``/ValueStoreSync/SyncPushResponse/Outcome/rejected(_:)``: the replica keeps it in
    /// ``/ValueStoreSync/SyncStatus/rejectedChanges`` and never sends it again.
    ///
    /// ```swift
    /// options.maximumRequestBytes = 256 << 10   // a proxy that takes 256 KiB at most
    /// ```
    public var maximumRequestBytes: Int = 1 << 20
    /// How the pokes reconnect and fall back, and how long a 429 is waited out; internal, so
    /// tests can shorten them.
    var timings = SyncHTTPTimings()

    /// The default options.
    ///
    /// ```swift
    /// let options = SyncHTTPOptions()
    /// ```
    public init() {}
}
