#if Hummingbird
import Foundation
import HTTPTypes
import Hummingbird
import Testing
import ValueStoreSyncHTTP
import ValueStoreSyncHTTPServer

@Suite(.timeLimit(.minutes(1))) struct ResponseAdapterTests {
    /// A body writer that reports each write and the finish as it happens.
    struct ReportingWriter: ResponseBodyWriter {
        let events: AsyncStream<String>.Continuation

        mutating func write(_ buffer: ByteBuffer) async throws {
            events.yield(String(buffer: buffer))
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
            events.yield("finished")
            events.finish()
        }
    }

    @Test func aStreamIsWrittenChunkByChunkAsTheServiceSendsIt() async throws {
        let (chunks, send) = AsyncStream.makeStream(of: Data.self)
        let sse = SyncHTTPResponse(
            status: 200,
            headers: [
                "content-type": "text/event-stream", "cache-control": "no-cache, no-transform",
                "x-accel-buffering": "no",
            ],
            body: .stream(chunks))
        let response = Response(sse)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "text/event-stream")
        #expect(response.headers[.cacheControl] == "no-cache, no-transform")
        #expect(response.headers[try #require(HTTPField.Name("x-accel-buffering"))] == "no")

        let (events, report) = AsyncStream.makeStream(of: String.self)
        let writing = Task { try await response.body.write(ReportingWriter(events: report)) }
        var written = events.makeAsyncIterator()
        // Each chunk reaches the writer before the next is sent: nothing waits for the end.
        send.yield(Data("event: ready\ndata:\n\n".utf8))
        #expect(await written.next() == "event: ready\ndata:\n\n")
        send.yield(Data("event: poke\ndata:\n\n".utf8))
        #expect(await written.next() == "event: poke\ndata:\n\n")
        send.finish()
        #expect(await written.next() == "finished")
        try await writing.value
    }

    @Test func bytesAreTheWholeBodyWithTheirHeaders() async throws {
        let answer = SyncHTTPResponse(
            status: 429, headers: ["retry-after": "7", "content-type": "application/problem+json"],
            body: .bytes(Data("{}".utf8)))
        let response = Response(answer)
        #expect(response.status.code == 429)
        #expect(response.headers[.retryAfter] == "7")
        #expect(response.body.contentLength == 2)
    }
}
#endif
