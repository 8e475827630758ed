import Foundation
import Synchronization
import ValueStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The pokes of an HTTP remote: one element when a server-sent event stream says `ready` (so a
/// reconnect always pulls) and one per `poke`; long polling while no stream says `ready` in
/// time, a stream again later; a dead or ended stream reopened with a growing wait.
struct SyncHTTPPokes: Sendable {
    let client: SyncHTTPClient

    private var timings: SyncHTTPTimings { client.options.timings }

    /// The stream ``SyncRemote/pokes`` returns: it ends when its consumer stops, or at once for
    /// ``SyncHTTPOptions/Pokes/none`` and a URL the remote refuses.
    func stream() -> AsyncStream<Void> {
        let (pokes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        guard client.options.pokes != .none, (try? client.checkURL()) != nil else {
            continuation.finish()
            return pokes
        }
        let listening = Task { [timings] in
            await listen(on: timings.clock) { continuation.yield() }
            continuation.finish()
        }
        continuation.onTermination = { _ in listening.cancel() }
        return pokes
    }

    /// How one stream ended.
    enum End: Equatable {
        /// It said `ready`, then ended or fell silent: open another.
        case afterReady
        /// It could not be opened, or ended before `ready`: wait, then open another.
        case failed
        /// It said nothing within the ready timeout, or is not an event stream: long-poll.
        case notReady
    }

    /// Listens until cancelled, its waits measured on `clock`.
    private func listen<C: Clock<Duration>>(on clock: C, _ poke: @escaping @Sendable () -> Void) async {
        var streamAgain: C.Instant? = client.options.pokes == .serverSentEvents ? clock.now : nil
        var failures = 0
        while !Task.isCancelled {
            var failed = true
            if let again = streamAgain, again <= clock.now {
                switch await serverSentEvents(on: clock, poke) {
                case .afterReady:
                    failures = 1  // the shortest wait: a stream that ends at once never spins
                    failed = false
                case .failed:
                    failures += 1
                case .notReady:
                    streamAgain = clock.now.advanced(by: timings.serverSentEventsRetry)
                    failures = 0
                    continue
                }
            } else {
                let started = clock.now
                do {
                    try await longPoll()
                    poke()
                    failures = 0
                    // At most one poll a `longPollSpacing`: a server or proxy that answers at
                    // once, without holding the poll, is not asked again and again at once.
                    let next = started.advanced(by: timings.longPollSpacing)
                    if next > clock.now {
                        guard (try? await clock.sleep(until: next, tolerance: nil)) != nil else { return }
                    }
                    continue
                } catch {
                    failures += 1
                }
            }
            guard (try? await clock.sleep(for: timings.reconnectDelay(after: failures))) != nil else { return }
            // A failed request pokes before the next: the replica pulls once a reconnect delay,
            // so a server whose pokes keep failing (a proxy's 403 or 404, a server without
            // them) still brings other devices' changes, and one that cannot be reached shows
            // in the replica's status.
            if failed { poke() }
        }
    }

    /// One long poll: returns when the server answers, poked or not (either way the replica
    /// pulls, so a change made between two polls is never missed).
    private func longPoll() async throws {
        let request = client.get("v1/pokes", query: [URLQueryItem(name: "wait", value: "\(timings.longPollSeconds)")])
        _ = try await client.send(
            request, effect: .readOnly, within: .seconds(timings.longPollSeconds) + client.options.requestTimeout,
            waits: true)
    }

    /// Opens one event stream and reads it until it ends, falls silent, or says nothing in time.
    private func serverSentEvents<C: Clock<Duration>>(on clock: C, _ poke: @escaping @Sendable () -> Void) async
        -> End
    {
        let heard = Heard(clock)
        return await withTaskGroup(of: End.self) { group in
            group.addTask {
                do {
                    return try await read(heard: heard, poke)
                } catch {
                    return heard.state.withLock { $0.ready } ? .afterReady : .failed
                }
            }
            group.addTask {
                while true {
                    // The time is read before the state: what the state takes in between (a
                    // send, a 401, a `ready`) only moves the deadline later, so a stream is never
                    // judged on a time its state had not seen.
                    let now = clock.now
                    let (ready, last, sent, preparing) = heard.state.withLock {
                        ($0.ready, $0.last, $0.sent, $0.preparing)
                    }
                    let deadline =
                        ready
                        ? last.advanced(by: timings.silenceLimit) : readyDeadline(preparing: preparing, sent: sent)
                    if deadline <= now { return ready ? .afterReady : .notReady }
                    // Awake within a silence limit at most: a `ready` that comes while this
                    // sleeps towards the ready timeout starts the silence clock. Until the
                    // request is sent, within a quarter of the ready timeout: its sending moves
                    // the deadline closer.
                    let awake =
                        ready || sent != nil ? timings.silenceLimit : max(timings.readyTimeout / 4, .milliseconds(10))
                    let wake = min(deadline, now.advanced(by: min(awake, timings.silenceLimit)))
                    guard (try? await clock.sleep(until: wake, tolerance: nil)) != nil else { return .failed }
                }
            }
            let end = await group.next() ?? .failed
            group.cancelAll()
            return end
        }
    }

    /// When a stream that has not said `ready` is given up: a ready timeout after its request
    /// was sent, for a transport that says when (``SyncHTTPTransport/streamSaying``), so that the
    /// token's fetch and the transport's warm-up never use it up; until it is sent, the request
    /// timeout more, from the start of the stream or of its token's renewal after a 401. For
    /// other transports, a ready timeout after the stream was started.
    private func readyDeadline<Instant: InstantProtocol<Duration>>(preparing: Instant, sent: Instant?) -> Instant {
        if let sent { return sent.advanced(by: timings.readyTimeout) }
        let allowance = client.options.transport.streamSaying != nil ? client.options.requestTimeout : .zero
        return preparing.advanced(by: allowance + timings.readyTimeout)
    }

    /// Opens the stream and reads its events, noting each in `heard`.
    private func read<C: Clock<Duration>>(
        heard: Heard<C>,
        _ poke: @escaping @Sendable () -> Void
    ) async throws -> End {
        var request = client.get("v1/pokes")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        let transport = client.options.transport
        let (chunks, head) = try await client.authorized(request) { request in
            let sent: @Sendable () -> Void = { heard.note { $0.sent = $1 } }
            let (head, chunks) =
                if let streamSaying = transport.streamSaying {
                    try await streamSaying(request, sent)
                } else {
                    try await transport.stream(request)
                }
            if head.statusCode == 401 {
                // The token is renewed, then the request sent again: a preparation of its own.
                heard.note { state, now in
                    state.sent = nil
                    state.preparing = now
                }
            }
            return (chunks, head)
        }
        guard head.statusCode == 200 else {
            chunks.discard()
            // 404: a server without streams; anything else: try again later.
            return head.statusCode == 404 ? .notReady : .failed
        }
        // A media type's name is not case-sensitive.
        guard head.value(forHTTPHeaderField: "Content-Type")?.lowercased().hasPrefix("text/event-stream") == true
        else {
            chunks.discard()
            return .notReady
        }
        var events = ServerSentEvents()
        for try await chunk in chunks {
            for event in events.feed(chunk) {
                let first = heard.note { heard, now in
                    defer {
                        heard.last = now
                        if event == SyncPokeEvent.readyName { heard.ready = true }
                    }
                    return !heard.ready && event == SyncPokeEvent.readyName
                }
                if first || (event == SyncPokeEvent.pokeName && heard.state.withLock({ $0.ready })) {
                    poke()
                }
            }
        }
        return heard.state.withLock { $0.ready } ? .afterReady : .failed
    }
}

/// What a stream said so far, on `clock`: when its request's preparation started, when it was
/// sent (where the transport says), whether `ready`, and when it last said anything.
private final class Heard<C: Clock<Duration>>: Sendable {
    struct State {
        var preparing: C.Instant
        var sent: C.Instant?
        var ready = false
        var last: C.Instant
    }

    let clock: C
    let state: Mutex<State>

    init(_ clock: C) {
        self.clock = clock
        let now = clock.now
        state = Mutex(State(preparing: now, last: now))
    }

    /// Changes the state with the clock's time now.
    func note<Answer>(_ change: (inout State, C.Instant) -> Answer) -> Answer {
        let now = clock.now
        return state.withLock { change(&$0, now) }
    }
}
