import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

@testable import ValueStoreSyncHTTP

/// The remote's pokes: a server-sent event stream's `ready` and `poke`s, reconnects, the fall
/// back to long polling and back, and the end when the consumer stops.
@Suite(.timeLimit(.minutes(1))) struct SyncHTTPPokesTests {
    static let ready = Data("event: ready\ndata:\n\n".utf8)
    static let poke = Data("event: poke\ndata:\n\n".utf8)
    static let heartbeat = Data("event: heartbeat\ndata:\n\n".utf8)

    @Test func aStreamPokesOnReadyAndOnEachPoke() async throws {
        try await HTTPSandbox.with { sandbox in
            let streams = EventStreams()
            let server = try LoopbackHTTPServer { request, _ in streams.respond(to: request) }
            defer { server.stop() }
            let pokes = sandbox.remote(server.url).pokes()
            let stream = try await streams.next()
            #expect(stream.query["account"] == sandbox.account.id)
            stream.writer.yield(Self.ready)
            try await expectPoke(pokes, "the ready's poke")
            stream.writer.yield(Self.heartbeat + Self.poke)
            try await expectPoke(pokes, "the poke's poke")
            stream.writer.yield(Self.heartbeat)
            stream.writer.yield(Self.poke)
            try await expectPoke(pokes, "the second poke")
            #expect(streams.opened == 1)
        }
    }

    @Test func anEndedStreamIsOpenedAgainAndItsReadyPokes() async throws {
        try await HTTPSandbox.with { sandbox in
            let streams = EventStreams()
            let server = try LoopbackHTTPServer { request, _ in streams.respond(to: request) }
            defer { server.stop() }
            let pokes = sandbox.remote(server.url).pokes()
            let first = try await streams.next()
            first.writer.yield(Self.ready)
            try await expectPoke(pokes, "the first ready")
            first.writer.finish()
            let second = try await streams.next()
            second.writer.yield(Self.ready)
            try await expectPoke(pokes, "the reconnect's ready")
        }
    }

    @Test func aSilentStreamIsOpenedAgain() async throws {
        try await HTTPSandbox.with { sandbox in
            let streams = EventStreams()
            let server = try LoopbackHTTPServer { request, _ in streams.respond(to: request) }
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.timings.silenceLimit = .milliseconds(100)
            // Longer than the test waits for the second stream: the watchdog, asleep until the
            // first stream's ready timeout, must wake for the silence.
            options.timings.readyTimeout = .seconds(120)
            let pokes = sandbox.remote(server.url, options: options).pokes()
            let first = try await streams.next()
            first.writer.yield(Self.ready)
            try await expectPoke(pokes, "the first ready")
            // Nothing more on the first stream: the remote gives up on it and opens another.
            let second = try await streams.next()
            second.writer.yield(Self.ready)
            try await expectPoke(pokes, "the second stream's ready")
        }
    }

    /// Measured on a clock of the test's: no stream is given up, and no poll is due, because the
    /// machine was slow. The ready timeout ends at 10 s exactly, and the remote tries a stream
    /// again at the first poll's end from 70 s on (60 s after it gave up), not before.
    @Test func aStreamWithoutReadyInTimeFallsBackToLongPollingThenTriesAStreamAgain() async throws {
        try await HTTPSandbox.with { sandbox in
            let streams = EventStreams()
            let polls = SeenRequests()
            // Each poll after the first is held until the test ends it with the continuation
            // the poll hands over: polls that overlapped, were the remote ever to send them,
            // could not take each other's answers.
            let (heldPolls, pollHeld) = AsyncStream<AsyncStream<Void>.Continuation>.makeStream()
            var held: [AsyncStream<Void>.Continuation] = []
            defer { for poll in held { poll.finish() } }
            let server = try LoopbackHTTPServer { request, token in
                guard request.query["wait"] != nil else { return streams.respond(to: request) }
                polls.note(request, token: token)
                if polls.all.count > 1 {
                    let (answer, answering) = AsyncStream<Void>.makeStream()
                    pollHeld.yield(answering)
                    for await _ in answer {}
                }
                return SyncHTTPResponse(
                    status: 200, headers: ["content-type": "application/json"],
                    body: .bytes(Data(#"{"poked":true}"#.utf8)))
            }
            defer { server.stop() }
            let clock = ManualClock()
            var options = Self.options(on: clock)
            options.timings.readyTimeout = .seconds(10)
            options.timings.serverSentEventsRetry = .seconds(60)
            let pokes = sandbox.remote(server.url, options: options).pokes()
            _ = try await streams.next()  // a proxy that buffers it: no ready ever arrives
            // Just short of the ready timeout, the remote still waits for the stream.
            clock.advance(by: .seconds(10) - .milliseconds(1))
            try await within(.seconds(20), "the watchdog waiting out the ready timeout") {
                await clock.untilSomeoneSleepsPastNow()
            }
            clock.advance(by: .milliseconds(1))
            try await expectPoke(pokes, "the first long poll's poke")
            #expect(polls.all.first?.query["wait"] == "25")
            #expect(polls.all.first?.query["account"] == sandbox.account.id)
            // The second poll ends just short of the time for a stream: the remote polls again.
            let second = try #require(
                await within(.seconds(20), "the second long poll") { await heldPolls.first { _ in true } })
            held.append(second)
            clock.advance(by: .seconds(60) - .milliseconds(1))
            second.finish()
            try await expectPoke(pokes, "the second long poll's poke")
            let third = try #require(
                await within(.seconds(20), "the third long poll") { await heldPolls.first { _ in true } })
            held.append(third)
            // The third ends at the time: the remote opens a stream.
            clock.advance(by: .milliseconds(1))
            third.finish()
            try await expectPoke(pokes, "the third long poll's poke")
            let again = try await streams.next()
            again.writer.yield(Self.ready)
            // The only poke left to come: the stream's.
            try await expectPoke(pokes, "the stream's ready, tried again")
            #expect(polls.all.count == 3)
        }
    }

    /// The ready timeout counts from the stream's request being sent: a token that takes longer
    /// than it to fetch never makes the remote give up on a stream it has not sent yet.
    @Test func aSlowTokenDoesNotUseUpTheReadyTimeout() async throws {
        try await expectAStreamSlowToPrepareIsKept(accepting: "slow") { _, slowly in
            await slowly()
            return "slow"
        }
    }

    /// Nor does a token's renewal after a 401: the request sent again with the new token has
    /// the whole ready timeout, and its preparation the whole request timeout again, counted
    /// from the 401 (which comes 5 seconds after the first request was sent).
    @Test func aSlowRenewalAfterA401DoesNotUseUpTheReadyTimeout() async throws {
        // To 28 seconds: past 26, the request timeout and the ready timeout from the stream's
        // start; short of 31, the same from the 401.
        try await expectAStreamSlowToPrepareIsKept(accepting: "renewed", advancing: .seconds(23)) { rejected, slowly in
            guard rejected != nil else { return "expired" }
            await slowly()
            return "renewed"
        }
    }

    /// A server that answers every request at once, `{"poked":false}`, noting it in `polls`.
    private static func answeringEveryPollAtOnce(noting polls: SeenRequests) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request, token in
            polls.note(request, token: token)
            return SyncHTTPResponse(
                status: 200, headers: ["content-type": "application/json"], body: .bytes(Data(#"{"poked":false}"#.utf8))
            )
        }
    }

    /// The sandbox's options, with their waits measured on `clock`, and no wait between
    /// attempts after a failure or between polls: a wait no one moves the clock for would hold
    /// a retry for ever.
    private static func options(on clock: ManualClock) -> SyncHTTPOptions {
        var options = HTTPSandbox.options()
        options.timings.clock = clock
        options.timings.reconnectDelay = .zero
        options.timings.maximumReconnectDelay = .zero
        options.timings.longPollSpacing = .zero
        return options
    }

    /// A token source that calls `slowly` where it should take longer than the ready timeout.
    typealias SlowToken =
        @Sendable (_ rejected: String?, _ slowly: @escaping @Sendable () async -> Void) async throws -> String

    /// A remote whose `token` takes longer than its ready timeout of 6 seconds (`slowly`
    /// returns once the test's clock has moved on by `advancing`), against a server that refuses
    /// every token but `accepted` (5 seconds after the request), still reads its stream's `ready`,
    /// and never long-polls. The clock is the test's: a loaded machine's slow answers never use
    /// up the timeout.
    private func expectAStreamSlowToPrepareIsKept(
        accepting accepted: String,
        advancing: Duration = .seconds(7),
        token: @escaping SlowToken
    ) async throws {
        try await HTTPSandbox.with { sandbox in
            let streams = EventStreams()
            let polls = SeenRequests()
            let clock = ManualClock()
            let server = try LoopbackHTTPServer { request, sent in
                guard request.query["wait"] == nil else {
                    polls.note(request, token: sent)
                    return SyncHTTPResponse(status: 200, body: .bytes(Data(#"{"poked":false}"#.utf8)))
                }
                guard sent == accepted else {
                    // A token's refusal takes 5 seconds (the warm-up `HEAD`, without one, none).
                    if sent != nil { clock.advance(by: .seconds(5)) }
                    return SyncHTTPResponse(status: 401)
                }
                return streams.respond(to: request)
            }
            defer { server.stop() }
            let (fetching, fetch) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            defer { release.finish() }
            let slowly: @Sendable () async -> Void = {
                fetch.yield()
                for await _ in released {}
            }
            var options = Self.options(on: clock)
            options.timings.readyTimeout = .seconds(6)
            let pokes = SyncRemote.http(server.url, account: sandbox.account, options: options) { rejected in
                try await token(rejected, slowly)
            }.pokes()
            _ = try await within(.seconds(20), "the slow token's fetch") { await fetching.first { _ in true } }
            // Past the ready timeout while the token is fetched: a remote that counted it from
            // the stream's start (or its preparation from before the 401) would give up now,
            // and sleep no more.
            clock.advance(by: advancing)
            try await within(.seconds(20), "the stream's watchdog waiting on") {
                await clock.untilSomeoneSleepsPastNow()
            }
            release.finish()
            let stream = try await streams.next()
            stream.writer.yield(Self.ready)
            try await expectPoke(pokes, "the stream's ready")
            #expect(polls.all.isEmpty, "the remote gave up on a stream it had not sent, and long-polled")
        }
    }

    @Test func longPollingAsksToWait25SecondsAndNoPokesEndAtOnce() async throws {
        try await HTTPSandbox.with { sandbox in
            let polls = SeenRequests()
            let server = try Self.answeringEveryPollAtOnce(noting: polls)
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.pokes = .longPolling
            let pokes = sandbox.remote(server.url, options: options).pokes()
            try await expectPoke(pokes, "a long poll's answer")
            #expect(polls.all.allSatisfy { $0.path == "v1/pokes" && $0.query["wait"] == "25" })

            options.pokes = .none
            let none = sandbox.remote(server.url, options: options).pokes()
            let count = try await within(.seconds(20), "no pokes' end") { await none.reduce(0) { n, _ in n + 1 } }
            #expect(count == 0)
        }
    }

    /// A server (or a proxy) that answers each long poll at once is polled once a second, not
    /// again and again as fast as it answers.
    @Test func longPollsAnsweredAtOnceAreASecondApart() async throws {
        try await HTTPSandbox.with { sandbox in
            let polls = SeenRequests()
            let server = try Self.answeringEveryPollAtOnce(noting: polls)
            defer { server.stop() }
            let clock = ManualClock()
            var options = Self.options(on: clock)
            options.pokes = .longPolling
            options.timings.longPollSpacing = .seconds(1)
            let pokes = sandbox.remote(server.url, options: options).pokes()
            try await expectPoke(pokes, "the first poll's answer")
            try await within(.seconds(20), "the wait for the next poll") { await clock.untilSomeoneSleepsPastNow() }
            #expect(polls.all.count == 1)
            clock.advance(by: .seconds(1))
            try await expectPoke(pokes, "the second poll's answer")
            #expect(polls.all.count == 2)
        }
    }

    /// Pokes that keep failing (a 404 to a stream and to a poll: a proxy, or a server without
    /// them) still poke after each wait, so the replica pulls.
    @Test func pokesThatKeepFailingStillPokeAfterEachWait() async throws {
        try await HTTPSandbox.with { sandbox in
            let server = try LoopbackHTTPServer { _, _ in
                SyncHTTPResponse(status: 404, headers: [:], body: .bytes(Data()))
            }
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.timings.reconnectDelay = .milliseconds(10)
            let pokes = sandbox.remote(server.url, options: options).pokes()
            try await expectPoke(pokes, "a poke after a failed poll")
        }
    }

    /// A media type's name is not case-sensitive: a stream that says it is `Text/Event-Stream`
    /// is read as one, and its `ready` pokes without a long poll.
    @Test func aStreamsMediaTypeIsReadWhateverItsCase() async throws {
        try await HTTPSandbox.with { sandbox in
            let polls = SeenRequests()
            let (events, writer) = AsyncStream<Data>.makeStream()
            defer { writer.finish() }
            let server = try LoopbackHTTPServer { request, token in
                polls.note(request, token: token)
                return SyncHTTPResponse(
                    status: 200, headers: ["content-type": "Text/Event-Stream; charset=UTF-8"], body: .stream(events))
            }
            defer { server.stop() }
            let pokes = sandbox.remote(server.url).pokes()
            writer.yield(Self.ready)
            try await expectPoke(pokes, "the stream's ready")
            #expect(polls.all.allSatisfy { $0.query["wait"] == nil }, "the remote long-polled")
        }
    }

    @Test func theStreamIsClosedWhenItsConsumerStops() async throws {
        try await HTTPSandbox.with { sandbox in
            let streams = EventStreams()
            let server = try LoopbackHTTPServer { request, _ in streams.respond(to: request) }
            defer { server.stop() }
            let pokes = sandbox.remote(server.url).pokes()
            let consuming = Task { for await _ in pokes {} }
            let stream = try await streams.next()
            let (closed, close) = AsyncStream<Void>.makeStream()
            stream.writer.onTermination = { _ in close.yield() }
            stream.writer.yield(Self.ready)
            consuming.cancel()
            _ = try await within(.seconds(20), "the server's stream closing") { await closed.first { _ in true } }
        }
    }
}

/// Waits for one element of `pokes`, failing by name after 20 seconds or if the stream ends.
func expectPoke(_ pokes: AsyncStream<Void>, _ what: String) async throws {
    let poked = try await within(.seconds(20), what) { await pokes.first { _ in true } != nil }
    #expect(poked, "\(what): the pokes ended")
}

/// Event streams a test writes itself: each `GET v1/pokes` without `wait` opens one.
final class EventStreams: Sendable {
    struct Opened: Sendable {
        var query: [String: String]
        var writer: AsyncStream<Data>.Continuation
    }

    private let arrivals: AsyncStream<Opened>
    private let arrive: AsyncStream<Opened>.Continuation
    private let count = Mutex(0)

    init() {
        (arrivals, arrive) = AsyncStream<Opened>.makeStream()
    }

    /// How many streams were opened.
    var opened: Int { count.withLock { $0 } }

    func respond(to request: SyncHTTPRequest) -> SyncHTTPResponse {
        let (chunks, writer) = AsyncStream<Data>.makeStream()
        count.withLock { $0 += 1 }
        arrive.yield(Opened(query: request.query, writer: writer))
        return SyncHTTPResponse(
            status: 200,
            headers: [
                "content-type": "text/event-stream", "cache-control": "no-cache, no-transform",
                "x-accel-buffering": "no",
            ],
            body: .stream(chunks))
    }

    /// The next stream opened.
    func next() async throws -> Opened {
        let arrivals = self.arrivals
        let opened = try await within(.seconds(20), "a poke stream's request") { await arrivals.first { _ in true } }
        return try #require(opened)
    }
}
