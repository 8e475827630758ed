import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

@testable import ValueStoreSyncHTTP

/// An idle device over HTTP: once it has synced, it holds its poke stream open and sends nothing
/// else, however many heartbeats of quiet the stream carries.
@Suite(.timeLimit(.minutes(2))) struct SyncHTTPIdleTests {
    @Test func anIdleDeviceMakesNoRequestBeyondItsOpenStream() async throws {
        try await HTTPSandbox.with { sandbox in
            // One service for the whole test (its streams live in it), with a heartbeat every
            // 10 ms: each heartbeat is a stretch of quiet the device lived through.
            var limits = SyncHTTPLimits()
            limits.pokeHeartbeat = .milliseconds(10)
            let service = SyncHTTPService(limits: limits, remote: sandbox.server.remote(for:))
            let traffic = Traffic()
            let server = try LoopbackHTTPServer { request, _ in
                traffic.note(.request("\(request.method) \(request.path)"))
                return traffic.watching(await service.respond(to: request, account: sandbox.account))
            }
            defer { server.stop() }
            var options = SyncOptions()
            options.fileOptions = .cache
            // A device that polled in spite of its open stream would poll every 10 ms.
            options.pollInterval = .milliseconds(10)
            let device = try SyncReplica(
                directory: sandbox.root.appending(path: "phone", directoryHint: .isDirectory), account: sandbox.account,
                remote: .http(server.url, account: sandbox.account) { _ in "t1" }, options: options)
            let syncing = Task { try await device.run() }
            defer { syncing.cancel() }

            // Settled: the stream said `ready`, a pull came after it (the reconnect's pull), and
            // 5 heartbeats went by since the last request with the device idle. (Heartbeats, not
            // time: a full run's busy pool delays the server's 10 ms ticks and a device's polls alike.)
            let heartbeats = try await traffic.wait("the device settling after its stream's ready") { events in
                guard let ready = events.firstIndex(of: .ready),
                    let pull = events.lastIndex(of: .request("POST v1/pull")), pull > ready,
                    let last = events.lastIndex(where: \.isRequest)
                else { return false }
                let status = device.status
                return events[last...].count { $0 == .heartbeat } >= 5 && status.phase == .idle
                    && status.pendingChanges == 0
            }
            let settled = traffic.events.count { $0.isRequest }
            try await traffic.wait("20 heartbeats more") { events in
                events.count { $0 == .heartbeat } >= heartbeats + 20
            }

            let events = traffic.events
            let requests = events.filter(\.isRequest)
            #expect(requests.count == settled, "requests while idle: \(requests.dropFirst(settled))")
            #expect(requests.count { $0 == .request("GET v1/pokes") } == 1, "\(requests)")
            #expect(events.count { $0 == .ready } == 1)
        }
    }
}

/// What went over the loopback server, in order: each request's method and route, and each event
/// of a poke stream as the server wrote it.
private final class Traffic: Sendable {
    enum Event: Hashable, Sendable {
        case request(String)
        case ready
        case heartbeat
        case poke

        var isRequest: Bool {
            if case .request = self { true } else { false }
        }
    }

    private let state = Mutex<[Event]>([])
    /// Rung on every event, so a wait checks its condition again.
    private let (rings, bell) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    var events: [Event] { state.withLock { $0 } }

    func note(_ event: Event) {
        state.withLock { $0.append(event) }
        bell.yield()
    }

    /// `response`, its event stream (if it is one) noting each event as the server writes it.
    func watching(_ response: SyncHTTPResponse) -> SyncHTTPResponse {
        guard case .stream(let chunks) = response.body else { return response }
        var watched = response
        watched.body = .stream(
            AsyncStream { continuation in
                let forwarding = Task {
                    for await chunk in chunks {
                        let text = String(decoding: chunk, as: UTF8.self)
                        for line in text.split(separator: "\n") where line.hasPrefix("event: ") {
                            switch line.dropFirst("event: ".count) {
                            case SyncPokeEvent.readyName: note(.ready)
                            case SyncPokeEvent.heartbeatName: note(.heartbeat)
                            default: note(.poke)
                            }
                        }
                        continuation.yield(chunk)
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in forwarding.cancel() }
            })
        return watched
    }

    /// Waits until `condition` holds of the events, up to 45 seconds, failing by `what`.
    ///
    /// - Returns: How many heartbeats had gone by when it held.
    @discardableResult
    func wait(_ what: String, until condition: @escaping @Sendable ([Event]) -> Bool) async throws -> Int {
        let rings = self.rings
        let heartbeats = try await within(.seconds(45), what) { () async -> Int? in
            for await _ in rings {
                let events = self.events
                if condition(events) { return events.count { $0 == .heartbeat } }
            }
            return nil
        }
        return try #require(heartbeats, "\(what): the traffic's bell stopped")
    }
}
