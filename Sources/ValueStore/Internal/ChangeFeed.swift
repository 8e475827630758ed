import Synchronization

/// Whether a remote source of change signals (a PostgreSQL table's listening connection) can
/// vouch that no signal was missed, for the caches and streams that rely on its signals.
///
/// A file store's signals come from the kernel and are checked by ``FileFreshness``; a remote
/// source's come over a connection that can die without a word. Such a source makes one feed
/// and says what it knows:
///
/// - ``follow()``: signals arrive, and none was missed since the last call (the source has just
///   signalled every key it follows). Each call starts a new *epoch*.
/// - ``doubt()``: signals may be missed now (the connection is lost, or proved silent).
/// - ``fail(_:)``: signals cannot be had at all, for a reason worth reporting (the server is a
///   standby, the pool has no connection to spare).
///
/// A cache answers from memory only while every feed it depends on follows, and only with a
/// value loaded in the feeds' current epochs; a stream reports a failed feed as its state. Both
/// learn of their feeds through ``ChangeFeeds/recording`` while they subscribe.
package final class ChangeFeed: Sendable {
    /// What the feed can vouch for now.
    package enum Health: Sendable {
        /// Every signal arrives.
        case following
        /// Signals may be missed; nothing to report yet.
        case doubtful
        /// Signals cannot be had, for this reason.
        case failed(any Error)

        var isFollowing: Bool {
            if case .following = self { true } else { false }
        }
    }

    private struct State {
        var health = Health.doubtful
        var epoch: UInt64 = 0
    }

    private let state = Mutex(State())

    /// How many feeds do not follow now: while none, a cache's check costs one atomic load.
    static let notFollowing = Atomic<Int>(0)

    /// One more each time any feed starts following, so a cache can tell with one atomic load
    /// that no feed started a new epoch since it last looked.
    static let epochs = Atomic<UInt64>(0)

    /// A feed that does not follow yet.
    package init() {
        Self.notFollowing.add(1, ordering: .releasing)
    }

    deinit {
        if !state.withLock({ $0.health.isFollowing }) {
            Self.notFollowing.subtract(1, ordering: .releasing)
        }
    }

    /// What the feed vouches for now.
    package var health: Health {
        state.withLock { $0.health }
    }

    /// Its health and its epoch (one more each time it starts following), read together.
    var reading: (health: Health, epoch: UInt64) {
        state.withLock { ($0.health, $0.epoch) }
    }

    /// Signals arrive from now on, and the source has signalled (or is about to signal) every
    /// key it follows, so a value loaded before this call is not trusted after it.
    package func follow() {
        let wasFollowing = state.withLock { state in
            defer {
                state.health = .following
                state.epoch += 1
            }
            return state.health.isFollowing
        }
        // The new epoch first: a cache that sees no feed doubting must also see the epoch move.
        Self.epochs.add(1, ordering: .releasing)
        if !wasFollowing {
            Self.notFollowing.subtract(1, ordering: .releasing)
        }
    }

    /// Signals may be missed from now on.
    package func doubt() {
        set(.doubtful)
    }

    /// Signals cannot be had, because of `error`; streams report it as their state.
    package func fail(_ error: any Error) {
        set(.failed(error))
    }

    private func set(_ health: Health) {
        let wasFollowing = state.withLock { state in
            defer { state.health = health }
            return state.health.isFollowing
        }
        if wasFollowing {
            Self.notFollowing.add(1, ordering: .releasing)
        }
    }

    /// Adds this feed to the caller's ``ChangeFeeds/recording``, if any: call it while making
    /// the signals a cache or stream subscribes to.
    package func record() {
        ChangeFeeds.recording?.add(self)
    }
}

/// The feeds a cache or a stream depends on, recorded while it subscribes to its store's
/// signals; see ``ChangeFeed``.
@usableFromInline
package final class ChangeFeeds: Sendable {
    private struct State {
        var feeds: [ChangeFeed] = []
        /// The epoch of each feed at the last check, by position in `feeds`.
        var seenEpochs: [UInt64] = []
    }

    private let state = Mutex(State())
    /// ``ChangeFeed/epochs`` at the last check.
    private let seenEpochs = Atomic<UInt64>(0)

    /// Bound while a cache or a stream subscribes to its store's signals: the feeds behind them
    /// are added here, also from tasks the subscription starts.
    @TaskLocal package static var recording: ChangeFeeds?

    @usableFromInline
    init() {}

    func add(_ feed: ChangeFeed) {
        state.withLock { state in
            guard !state.feeds.contains(where: { $0 === feed }) else { return }
            state.feeds.append(feed)
            // Recorded as the subscription starts: what is loaded after it, in the same epoch,
            // missed nothing. A feed that does not follow yet is found changed at the first check.
            let (health, epoch) = feed.reading
            state.seenEpochs.append(health.isFollowing ? epoch : .max)
        }
    }

    /// Whether a value held in memory must be checked with ``hasChanged()`` before it is
    /// served: some feed does not follow, or one started a new epoch since the last check. Two
    /// atomic loads while every feed in the process follows.
    @usableFromInline
    var needsCheck: Bool {
        ChangeFeed.notFollowing.load(ordering: .acquiring) > 0
            || ChangeFeed.epochs.load(ordering: .acquiring) != seenEpochs.load(ordering: .relaxed)
    }

    /// Whether a value loaded before this call may be stale: one of these feeds does not follow,
    /// or started a new epoch since the last check. Records what it saw.
    @usableFromInline
    func hasChanged() -> Bool {
        let epochs = ChangeFeed.epochs.load(ordering: .acquiring)
        let changed = state.withLock { state in
            var changed = false
            for (index, feed) in state.feeds.enumerated() {
                let (health, epoch) = feed.reading
                if !health.isFollowing || epoch != state.seenEpochs[index] {
                    changed = true
                }
                state.seenEpochs[index] = health.isFollowing ? epoch : .max
            }
            return changed
        }
        seenEpochs.store(epochs, ordering: .relaxed)
        return changed
    }

    /// The reason of the first feed that failed, if any.
    @usableFromInline
    var failure: (any Error)? {
        let feeds = state.withLock { $0.feeds }
        for feed in feeds {
            if case .failed(let error) = feed.health {
                return error
            }
        }
        return nil
    }
}
