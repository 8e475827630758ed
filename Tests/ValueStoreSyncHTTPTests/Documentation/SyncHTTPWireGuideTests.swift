import Foundation
import Testing
import ValueStoreSync
import ValueStoreSyncHTTP

// The code shown in Documentation/SyncHTTPWire.md, compiled and run.

@Suite struct SyncHTTPWireGuideTests {
    @Test func usage() async throws {
        let server = InMemorySyncServer()
        let account = SyncAccount(id: "user-42")
        let request = SyncHTTPRequest(method: "GET", path: "v1/pokes")
        var limits = SyncHTTPLimits()
        limits.maximumValueBytes = 64 << 10
        let service = SyncHTTPService(limits: limits, remote: server.remote(for:))
        let response = await service.respond(to: request, account: account)
        service.endPokeStreams()  // at shutdown: every poke stream ends; new ones are answered 503
        #expect(response.status == 200)
        let events = try PokeReading.events(of: response)
        #expect(try await PokeReading.read(events, until: nil, "the stream's end") == [PokeReading.ready])
        #expect(await service.respond(to: request, account: account).status == 503)
    }
}
