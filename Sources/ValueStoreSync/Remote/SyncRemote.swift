/// How a replica talks to its server: a witness of closures, like `ValueStore`.
///
/// `push` sends changes and `pull` asks for records; both take and return plain `Codable` values
/// (see the wire types), so a transport is a thin layer that carries them. `authoredPokes`
/// starts a stream of ``SyncPoke``s the server sends when the account changed ("pull now", and
/// which replica's push made the change when the server says); a replica's ``SyncReplica/run()``
/// pulls on each, except the echo of its own push it has applied already, and polls on a slow
/// timer only while no stream is alive. `pokes` is the same stream without authors. Tests wrap
/// the closures to drop, repeat or delay calls:
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
/// - Every write to the account is followed by a poke. A poke that names an author and a head
///   is sent only for that replica's push, after every version it wrote, all at or below the
///   head: the author skips it once its cursor reached the head, so a poke that named the wrong
///   author or too low a head would hide another device's change until the next poke.
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
    /// Starts a stream of pokes that say, when the server knows, whose push made the change.
    ///
    /// ```swift
    /// let pokes: SyncRemote.AuthoredPokes = { AsyncStream { $0.finish() } }   // none: run() polls
    /// ```
    public typealias AuthoredPokes = @Sendable () -> AsyncStream<SyncPoke>

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
    /// Starts a stream that signals when the account changed on the server: the
    /// ``authoredPokes`` without their authors. Setting it sets ``authoredPokes`` to its
    /// signals, each a ``SyncPoke/pullNow``.
    ///
    /// ```swift
    /// for await _ in remote.pokes() { try await replica.syncNow() }
    /// ```
    public var pokes: Pokes {
        get {
            let authored = authoredPokes
            return { Self.forward(authored()) { _ in () } }
        }
        set {
            authoredPokes = { Self.forward(newValue()) { SyncPoke.pullNow } }
        }
    }
    /// Starts a stream of pokes when the account changed on the server, each naming the push
    /// that made the change when the server knows.
    ///
    /// ```swift
    /// for await poke in remote.authoredPokes() { print(poke.author ?? "someone", poke.head ?? .zero) }
    /// ```
    public var authoredPokes: AuthoredPokes

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
        self.authoredPokes = { Self.forward(pokes()) { SyncPoke.pullNow } }
    }

    /// A remote from its closures, with pokes that name their authors.
    ///
    /// ```swift
    /// let remote = SyncRemote(
    ///     label: "counted", push: { try await inner.push($0) },
    ///     pull: { try await inner.pull($0) }, authoredPokes: { inner.authoredPokes() })
    /// ```
    ///
    /// - Parameters:
    ///   - label: What the remote is, for errors and logs.
    ///   - push: Sends changes and returns their outcomes.
    ///   - pull: Returns a page of records.
    ///   - authoredPokes: Starts a stream of pokes when the account changed, each naming the
    ///     push that made the change when the server knows.
    public init(
        label: String,
        push: @escaping Push,
        pull: @escaping Pull,
        authoredPokes: @escaping AuthoredPokes
    ) {
        self.label = label
        self.push = push
        self.pull = pull
        self.authoredPokes = authoredPokes
    }

    /// A stream of `transform` of each element of `stream`, in order, until either ends.
    private static func forward<Element: Sendable, Forwarded: Sendable>(
        _ stream: AsyncStream<Element>,
        _ transform: @escaping @Sendable (_ element: Element) -> Forwarded
    ) -> AsyncStream<Forwarded> {
        // Each element is taken from `stream` as the consumer asks for it, in the consumer's
        // task: no task of its own, nor a second buffer.
        AsyncStream {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next().map(transform)
        }
    }
}
