import Foundation
import Testing
import ValueStoreSync
import ValueStoreSyncHTTP
import ValueStoreTestSupport

/// `GET v1/pokes`: server-sent events and the long poll, one subscription per account, and the
/// end of every stream at shutdown. Short limits make the heartbeats and ends come soon; every
/// wait is bounded.
@Suite struct SyncPokeStreamTests {
    let account = SyncAccount(id: "user-42")
    let pokes = SyncHTTPRequest(method: "GET", path: "v1/pokes")

    func limits(heartbeat: Duration = .seconds(60), duration: Duration = .seconds(60)) -> SyncHTTPLimits {
        var limits = SyncHTTPLimits()
        limits.pokeHeartbeat = heartbeat
        limits.maximumPokeStreamDuration = duration
        limits.requestsPerMinutePerAccount = 10_000  // a thousand streams of one account, at once
        return limits
    }

    func wait(_ seconds: String) -> SyncHTTPRequest {
        SyncHTTPRequest(method: "GET", path: "v1/pokes", query: ["wait": seconds])
    }

    @Test func aStreamSaysReadyAtOnceThenPokesWithHeadersForProxies() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(limits: limits(), remote: recording.remote(for:))
        let response = await service.respond(to: pokes, account: account)
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/event-stream")
        #expect(response.headers["cache-control"] == "no-cache, no-transform")
        #expect(response.headers["x-accel-buffering"] == "no")
        let events = try PokeReading.events(of: response)
        #expect(try await PokeReading.read(events, until: PokeReading.ready, "ready") == [PokeReading.ready])
        try await PokeReading.waitUntil("the service's subscription") { recording.openPokeStreams == 1 }
        recording.poke()
        #expect(try await PokeReading.read(events, until: PokeReading.poke, "a poke") == [PokeReading.poke])
    }

    @Test func aQuietStreamGetsHeartbeats() async throws {
        let service = SyncHTTPService(
            limits: limits(heartbeat: .milliseconds(50)), remote: RecordingRemote().remote(for:))
        let events = try PokeReading.events(of: await service.respond(to: pokes, account: account))
        let seen = try await PokeReading.read(events, until: PokeReading.heartbeat, "a heartbeat")
        #expect(seen.first == PokeReading.ready)
        #expect(seen.last == PokeReading.heartbeat)
        let next = try await PokeReading.read(events, until: PokeReading.heartbeat, "a second heartbeat")
        #expect(next == [PokeReading.heartbeat])
    }

    @Test func aStreamEndsAfterItsLongestDurationAndItsSubscriptionWithIt() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(
            limits: limits(heartbeat: .milliseconds(50), duration: .milliseconds(200)),
            remote: recording.remote(for:))
        let events = try PokeReading.events(of: await service.respond(to: pokes, account: account))
        let seen = try await PokeReading.read(events, until: nil, "the stream's end")
        #expect(seen.first == PokeReading.ready)
        #expect(Set(seen.dropFirst()).isSubset(of: [PokeReading.heartbeat]))
        try await PokeReading.waitUntil("the subscription's end") { recording.openPokeStreams == 0 }
    }

    @Test func aThousandStreamsOfAnAccountShareOneSubscription() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(limits: limits(), remote: recording.remote(for:))
        var streams: [AsyncStream<Data>] = []
        for _ in 0..<1_000 {
            streams.append(try PokeReading.events(of: await service.respond(to: pokes, account: account)))
        }
        try await PokeReading.waitUntil("the service's subscription") { recording.openPokeStreams == 1 }
        recording.poke()
        for events in streams {
            let seen = try await PokeReading.read(events, until: PokeReading.poke, "each stream's poke")
            #expect(seen == [PokeReading.ready, PokeReading.poke])
        }
        #expect(recording.subscriptions == 1)
        streams.removeAll()
        try await PokeReading.waitUntil("the subscription's end with the last stream") {
            recording.openPokeStreams == 0
        }
        let again = try PokeReading.events(of: await service.respond(to: pokes, account: account))
        try await PokeReading.waitUntil("a new subscription") { recording.openPokeStreams == 1 }
        #expect(recording.subscriptions == 2)
        // Read from the stream last, so an optimized build keeps it (and its subscription) open
        // through the waits above; `_ = again` let a release build drop it at once.
        #expect(try await PokeReading.read(again, until: PokeReading.ready, "ready") == [PokeReading.ready])
    }

    @Test func streamsOpenedAndDroppedAtOnceLeaveNoSubscriptionBehind() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(limits: limits(), remote: recording.remote(for:))
        let pokes = pokes
        try await withThrowingTaskGroup { group in
            for index in 0..<400 {
                group.addTask {
                    let account = SyncAccount(id: "user-\(index % 4)")
                    let events = try PokeReading.events(of: await service.respond(to: pokes, account: account))
                    _ = try await PokeReading.read(events, until: PokeReading.ready, "ready")
                }
            }
            try await group.waitForAll()
        }
        try await PokeReading.waitUntil("every subscription's end") { recording.openPokeStreams == 0 }
        #expect(recording.subscriptions >= 4)
    }

    @Test func aLongPollAnswersAtThePokeOrWhenTheWaitEnds() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(limits: limits(), remote: recording.remote(for:))
        let request = wait("30")
        async let poked = service.respond(to: request, account: account)
        try await PokeReading.waitUntil("the long poll's subscription") { recording.openPokeStreams == 1 }
        recording.poke()
        let answer = await poked
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "application/json")
        #expect(try Requests.bytes(of: answer) == Data(#"{"poked":true}"#.utf8))

        let quiet = await service.respond(to: wait("0"), account: account)
        #expect(try Requests.bytes(of: quiet) == Data(#"{"poked":false}"#.utf8))
        let bad = await service.respond(to: wait("soon"), account: account)
        #expect(bad.status == 400)
        #expect(try Requests.problem(of: bad)["code"] == "decodingFailed")
    }

    @Test func endingPokeStreamsEndsEveryStreamAndRefusesNewOnes() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(limits: limits(), remote: recording.remote(for:))
        var streams: [AsyncStream<Data>] = []
        for id in ["user-42", "user-7", "user-42"] {
            streams.append(try PokeReading.events(of: await service.respond(to: pokes, account: SyncAccount(id: id))))
        }
        let request = wait("30")
        async let polling = service.respond(to: request, account: account)
        try await PokeReading.waitUntil("both subscriptions") { recording.openPokeStreams == 2 }
        service.endPokeStreams()
        for events in streams {
            #expect(try await PokeReading.read(events, until: nil, "the stream's end") == [PokeReading.ready])
        }
        #expect(await polling.status == 503)
        #expect(await service.respond(to: pokes, account: account).status == 503)
        #expect(await service.respond(to: wait("1"), account: account).status == 503)
        try await PokeReading.waitUntil("the subscriptions' end") { recording.openPokeStreams == 0 }
    }

    @Test func streamsEndWhenTheAccountsPokesEnd() async throws {
        let server = InMemorySyncServer()
        let service = SyncHTTPService(limits: limits()) { account in
            var remote = server.remote(for: account)
            remote.pokes = { AsyncStream { $0.finish() } }
            return remote
        }
        let events = try PokeReading.events(of: await service.respond(to: pokes, account: account))
        #expect(try await PokeReading.read(events, until: nil, "the stream's end") == [PokeReading.ready])
    }
}
