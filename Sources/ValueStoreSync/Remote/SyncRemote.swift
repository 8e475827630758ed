/// How a replica talks to its server: a witness of closures, like `ValueStore`.
///
/// `push` sends changes and `pull` asks for records; both take and return plain `Codable` values
/// (see the wire types), so a transport is a thin layer that carries them. `pokes` starts a
/// stream the server signals when the account changed ("pull now", no data); a replica's
/// ``SyncReplica/run()`` pulls on each signal, and polls on a slow timer only while no stream is
/// alive. Tests wrap the closures to drop, repeat or delay calls:
///
/// ```swift
/// let inner = server.remote(for: account)
/// let remote = SyncRemote(
///     label: "flaky", push: { try await inner.push($0) },
///     pull: { try await inner.pull($0) }, pokes: { inner.pokes() })
/// ```
///
/// The laws every remote keeps:
/// - A call that throws may or may not have reached the server: a replica treats every error as
///   "try again later" and drops nothing.
/// - A push is idempotent: the same request twice has the effect of one.
/// - A pull changes nothing but the server's note of how far the replica has pulled.
public struct SyncRemote: Sendable {
    /// Sends changes; see ``SyncPushRequest``.
    ///
    /// ```swift
    /// let push: SyncRemote.Push = { request in try await client.send(request) }
    /// ```
    public typealias Push = @Sendable (_ request: SyncPushRequest) async throws -> SyncPushResponse
    /// Asks for a page of records; see ``SyncPullRequest``.
    ///
    /// ```swift
    /// let pull: SyncRemote.Pull = { request in try await client.send(request) }
    /// ```
    public typealias Pull = @Sendable (_ request: SyncPullRequest) async throws -> SyncPullResponse
    /// Starts a stream of "pull now" signals.
    ///
    /// ```swift
    /// let pokes: SyncRemote.Pokes = { AsyncStream { $0.finish() } }   // no pokes: run() polls
    /// ```
    public typealias Pokes = @Sendable () -> AsyncStream<Void>

    /// What the remote is, for errors and logs: "in-memory sync server".
    ///
    /// ```swift
    /// print(remote.label)   // "in-memory sync server, account 'user-42'"
    /// ```
    public var label: String
    /// Sends changes and returns their outcomes.
    ///
    /// ```swift
    /// let response = try await remote.push(request)
    /// ```
    public var push: Push
    /// Returns a page of records.
    ///
    /// ```swift
    /// let page = try await remote.pull(request)
    /// ```
    public var pull: Pull
    /// Starts a stream that signals when the account changed on the server.
    ///
    /// ```swift
    /// for await _ in remote.pokes() { try await replica.syncNow() }
    /// ```
    public var pokes: Pokes

    /// A remote from its closures.
    ///
    /// ```swift
    /// let remote = SyncRemote(
    ///     label: "flaky", push: { try await inner.push($0) },
    ///     pull: { try await inner.pull($0) }, pokes: { inner.pokes() })
    /// ```
    ///
    /// - Parameters:
    ///   - label: What the remote is, for errors and logs.
    ///   - push: Sends changes and returns their outcomes.
    ///   - pull: Returns a page of records.
    ///   - pokes: Starts a stream that signals when the account changed; by default one that
    ///     ends at once, so ``SyncReplica/run()`` polls.
    public init(
        label: String,
        push: @escaping Push,
        pull: @escaping Pull,
        pokes: @escaping Pokes = { AsyncStream { $0.finish() } }
    ) {
        self.label = label
        self.push = push
        self.pull = pull
        self.pokes = pokes
    }
}
