import Foundation
import Testing

@testable import ValueStoreSyncHTTP

/// The event parser: names at the blank line, across chunk boundaries, with either line ending.
@Suite struct ServerSentEventsTests {
    @Test func eventsAreNamedAtTheirBlankLineAcrossChunks() {
        var events = ServerSentEvents()
        #expect(events.feed(Data("event: ready\nda".utf8)) == [])
        #expect(
            events.feed(Data("ta:\n\nevent: heartbeat\r\ndata:\r\n\r\n: a comment\n\nevent: po".utf8)) == [
                "ready", "heartbeat",
            ])
        #expect(events.feed(Data("ke\ndata:\n\ndata: x\n\n".utf8)) == ["poke", "message"])
    }
}
