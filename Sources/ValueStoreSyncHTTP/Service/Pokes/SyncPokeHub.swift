package import Foundation
import Synchronization
package import ValueStoreSync

/// The open poke streams of a service, and the one subscription to each account's pokes they
/// share.
///
/// The first stream of an account starts a task that listens to the account's
/// ``SyncRemote/authoredPokes``; every poke it hears goes to each open stream of the account,
/// and the task ends with the account's last stream. So 1,000 streams of an account cost one
/// listener, and a stream costs its `AsyncStream` and an entry here, never a task of its own:
/// one ticker task per hub sends the heartbeats that are due and ends the streams that have
/// lived their time, sleeping until the earliest of those moments.
///
/// A stream is server-sent events (``SyncPokeEvent``: `ready` at once, a `poke` per poke, a
/// `heartbeat` after each ``SyncHTTPLimits/pokeHeartbeat`` of quiet), or a long poll's wait,
/// which gets pokes only. Each buffers its newest 8 events: a writer that fell that far behind
/// has a stalled client, and the newest events (a poke among them, if one came) are the ones
/// that matter to it. ``end()`` ends every stream and refuses new ones.
///
/// ```swift
/// let hub = SyncPokeHub(heartbeat: .seconds(20), remote: server.remote(for:))
/// if let events = hub.open(account, for: .seconds(900), kind: .events) {
///     for await event in events { write(event) }
/// }
/// ```
package final class SyncPokeHub: Sendable {
    /// What a stream carries.
    package enum Kind: Sendable {
        /// Server-sent events: `ready`, pokes and heartbeats.
        case events
        /// A long poll's wait: pokes only.
        case wait
    }

    private typealias Instant = ContinuousClock.Instant

    private struct Stream {
        var account: SyncAccount
        var continuation: AsyncStream<Data>.Continuation
        var kind: Kind
        var nextHeartbeat: Instant
        var end: Instant

        /// When the ticker has something to do for this stream.
        var deadline: Instant { kind == .events ? min(nextHeartbeat, end) : end }
    }

    private struct Listener {
        var streams: Set<UInt64>
        var task: Task<Void, Never>
        /// Which listener this is: one that ends by itself must not take its successor's streams.
        var generation: UInt64
    }

    private struct State {
        var streams: [UInt64: Stream] = [:]
        var listeners: [SyncAccount: Listener] = [:]
        var nextID: UInt64 = 0
        var isEnded = false
        var ticker: Task<Void, Never>?
        var tickerWakes: Instant?
        var tickerGeneration: UInt64 = 0
    }

    private let state = Mutex(State())
    private let heartbeat: Duration
    private let remote: @Sendable (_ account: SyncAccount) -> SyncRemote

    /// A hub that sends a heartbeat after `heartbeat` of quiet (10 ms at least) and listens to
    /// each account's pokes through `remote`.
    package init(heartbeat: Duration, remote: @escaping @Sendable (_ account: SyncAccount) -> SyncRemote) {
        self.heartbeat = max(heartbeat, .milliseconds(10))
        self.remote = remote
    }

    /// Whether ``end()`` was called.
    package var isEnded: Bool { state.withLock { $0.isEnded } }

    /// Opens a stream of `account` that ends after `duration`, or when its consumer stops
    /// iterating; `nil` after ``end()``.
    package func open(_ account: SyncAccount, for duration: Duration, kind: Kind) -> AsyncStream<Data>? {
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(8))
        if kind == .events {
            continuation.yield(SyncPokeEvent.ready)
        }
        let now = ContinuousClock.now
        let opened = state.withLock { state -> (id: UInt64, replacedTicker: Task<Void, Never>?)? in
            guard !state.isEnded else { return nil }
            let id = state.nextID
            state.nextID += 1
            let entry = Stream(
                account: account, continuation: continuation, kind: kind, nextHeartbeat: now + heartbeat,
                end: now + duration)
            state.streams[id] = entry
            if state.listeners[account] != nil {
                state.listeners[account]?.streams.insert(id)
            } else {
                state.listeners[account] = Listener(streams: [id], task: listen(to: account, id), generation: id)
            }
            guard let wakes = state.tickerWakes, wakes <= entry.deadline else {
                let replaced = state.ticker
                startTicker(waking: entry.deadline, in: &state)
                return (id, replaced)
            }
            return (id, nil)
        }
        guard let opened else {
            continuation.finish()
            return nil
        }
        opened.replacedTicker?.cancel()
        continuation.onTermination = { [weak self] _ in self?.close(opened.id) }
        return stream
    }

    /// Ends every stream, and refuses new ones from now on.
    package func end() {
        let (streams, listeners, ticker) = state.withLock { state in
            state.isEnded = true
            defer {
                state.streams = [:]
                state.listeners = [:]
                state.ticker = nil
                state.tickerWakes = nil
            }
            return (state.streams.values.map(\.continuation), state.listeners.values.map(\.task), state.ticker)
        }
        ticker?.cancel()
        for listener in listeners { listener.cancel() }
        for stream in streams { stream.finish() }
    }

    // MARK: Listening

    /// The task that hands `account`'s pokes to its streams.
    ///
    /// Detached: it serves every stream of the account, not the request that opened the first,
    /// so it takes none of that request's task-local values (a logger, a trace), whose copies
    /// also cost each account a slab of task memory. It reads the authored pokes, whose authors
    /// it ignores: a remote that makes them (a sync table's) then adds no layer to drop them.
    private func listen(to account: SyncAccount, _ generation: UInt64) -> Task<Void, Never> {
        let pokes = remote
        return Task.detached { [self] in
            for await _ in pokes(account).authoredPokes() {
                poke(account, generation)
            }
            listenerEnded(account, generation)
        }
    }

    private func poke(_ account: SyncAccount, _ generation: UInt64) {
        let next = ContinuousClock.now + heartbeat
        let continuations = state.withLock { state -> [AsyncStream<Data>.Continuation] in
            guard let listener = state.listeners[account], listener.generation == generation else { return [] }
            return listener.streams.compactMap { id in
                state.streams[id]?.nextHeartbeat = next
                return state.streams[id]?.continuation
            }
        }
        for continuation in continuations {
            continuation.yield(SyncPokeEvent.poke)
        }
    }

    /// The account's pokes ended (its remote stopped them): its streams end too, and a client
    /// that opens another pulls first, so nothing is missed.
    private func listenerEnded(_ account: SyncAccount, _ generation: UInt64) {
        let continuations = state.withLock { state -> [AsyncStream<Data>.Continuation] in
            guard let listener = state.listeners[account], listener.generation == generation else { return [] }
            state.listeners[account] = nil
            return listener.streams.compactMap { state.streams.removeValue(forKey: $0)?.continuation }
        }
        for continuation in continuations { continuation.finish() }
    }

    /// A stream's consumer stopped, or the stream was finished here.
    private func close(_ id: UInt64) {
        let listener = state.withLock { state in Self.remove(id, from: &state).listener }
        listener?.cancel()
    }

    /// Removes a stream, and its account's listener when it was the account's last stream.
    private static func remove(
        _ id: UInt64,
        from state: inout State
    ) -> (continuation: AsyncStream<Data>.Continuation?, listener: Task<Void, Never>?) {
        guard let stream = state.streams.removeValue(forKey: id) else { return (nil, nil) }
        state.listeners[stream.account]?.streams.remove(id)
        guard state.listeners[stream.account]?.streams.isEmpty == true else { return (stream.continuation, nil) }
        return (stream.continuation, state.listeners.removeValue(forKey: stream.account)?.task)
    }

    // MARK: Ticking

    private func startTicker(waking wakes: Instant, in state: inout State) {
        state.tickerGeneration += 1
        state.tickerWakes = wakes
        let generation = state.tickerGeneration
        state.ticker = Task { await tick(generation, waking: wakes) }
    }

    /// Sleeps until the earliest deadline, sends the heartbeats due (and those due within an
    /// eighth of a heartbeat, to wake less often) and ends the streams whose time is up; ends
    /// when no stream is open, or when another ticker replaced it.
    private func tick(_ generation: UInt64, waking first: Instant) async {
        var wakes = first
        while true {
            do {
                try await Task.sleep(until: wakes, clock: .continuous)
            } catch {
                return
            }
            let now = ContinuousClock.now
            let soon = now + heartbeat / 8
            let due = state.withLock { state -> Due? in
                guard state.tickerGeneration == generation, !state.isEnded else { return nil }
                var beats: [Continuation] = []
                var ended: [Continuation] = []
                var stopped: [Task<Void, Never>] = []
                for (id, stream) in state.streams {
                    if stream.end <= now {
                        let removed = Self.remove(id, from: &state)
                        removed.continuation.map { ended.append($0) }
                        removed.listener.map { stopped.append($0) }
                    } else if stream.kind == .events, stream.nextHeartbeat <= soon {
                        state.streams[id]?.nextHeartbeat = now + heartbeat
                        beats.append(stream.continuation)
                    }
                }
                let next = state.streams.values.map(\.deadline).min()
                state.tickerWakes = next
                if next == nil { state.ticker = nil }
                return Due(beats: beats, ended: ended, stopped: stopped, next: next)
            }
            guard let due else { return }
            for listener in due.stopped { listener.cancel() }
            for stream in due.beats { stream.yield(SyncPokeEvent.heartbeat) }
            for stream in due.ended { stream.finish() }
            guard let next = due.next else { return }
            wakes = next
        }
    }

    private typealias Continuation = AsyncStream<Data>.Continuation

    /// What a tick found to do, done outside the lock: a finish or a cancel runs handlers.
    private struct Due {
        var beats: [Continuation]
        var ended: [Continuation]
        var stopped: [Task<Void, Never>]
        var next: Instant?
    }
}
