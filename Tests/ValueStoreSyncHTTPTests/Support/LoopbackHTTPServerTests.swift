import Foundation
import Synchronization
import Testing
import ValueStoreSyncHTTP
import ValueStoreTestSupport

/// The loopback server the client's tests run against, spoken to in raw HTTP/1.1.
@Suite(.timeLimit(.minutes(1))) struct LoopbackHTTPServerTests {
    @Test func itAnswersARequestUnderItsMountWithTheBodyItRead() async throws {
        let seen = Mutex<[String]>([])
        let server = try LoopbackHTTPServer { request, token in
            let body = (try? await request.body(100)) ?? Data("unread".utf8)
            seen.withLock {
                $0.append(
                    "\(request.method) \(request.path) \(request.query) \(token ?? "-") \(String(decoding: body, as: UTF8.self))"
                )
            }
            return SyncHTTPResponse(
                status: 200, headers: ["content-type": "text/plain"], body: .bytes(Data("hello".utf8)))
        }
        defer { server.stop() }
        let answer = try await exchange(
            port: server.port,
            "POST /sync/v1/push?wait=25 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t1\r\nContent-Length: 4\r\n\r\nping"
        )
        #expect(answer.hasPrefix("HTTP/1.1 200 "))
        #expect(answer.contains("content-length: 5\r\n"))
        #expect(answer.contains("connection: close\r\n"))
        #expect(answer.hasSuffix("\r\n\r\nhello"))
        #expect(seen.withLock { $0 } == [#"POST v1/push ["wait": "25"] t1 ping"#])
    }

    @Test func aBodyThatWaitsFor100ContinueIsAskedForWhenTheHandlerReadsIt() async throws {
        let server = try LoopbackHTTPServer { request, _ in
            let body = (try? await request.body(100)) ?? Data()
            return SyncHTTPResponse(status: 200, body: .bytes(body))
        }
        defer { server.stop() }
        let answer = try await exchange(
            port: server.port,
            "POST /sync/v1/pull HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nping")
        #expect(answer.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 "))
        #expect(answer.hasSuffix("\r\n\r\nping"))
    }

    @Test func aBodyOverWhatTheHandlerTakesIsNeverRead() async throws {
        let server = try LoopbackHTTPServer { request, _ in
            do {
                _ = try await request.body(3)
                return SyncHTTPResponse(status: 200)
            } catch {
                return SyncHTTPResponse(status: error is SyncHTTPRequest.BodyTooLarge ? 413 : 500)
            }
        }
        defer { server.stop() }
        let answer = try await exchange(
            port: server.port, "POST /sync/v1/push HTTP/1.1\r\nContent-Length: 4\r\n\r\nping")
        #expect(answer.hasPrefix("HTTP/1.1 413 "))
    }

    @Test func aStreamIsWrittenInChunksAsTheyCome() async throws {
        let server = try LoopbackHTTPServer { _, _ in
            let (chunks, writer) = AsyncStream<Data>.makeStream()
            writer.yield(Data("event: ready\ndata:\n\n".utf8))
            writer.yield(Data("event: poke\ndata:\n\n".utf8))
            writer.finish()
            return SyncHTTPResponse(
                status: 200, headers: ["content-type": "text/event-stream"], body: .stream(chunks))
        }
        defer { server.stop() }
        let answer = try await exchange(port: server.port, "GET /sync/v1/pokes HTTP/1.1\r\n\r\n")
        #expect(answer.contains("transfer-encoding: chunked\r\n"))
        #expect(answer.hasSuffix("\r\n\r\n14\r\nevent: ready\ndata:\n\n\r\n13\r\nevent: poke\ndata:\n\n\r\n0\r\n\r\n"))
    }

    @Test func aPathOutsideTheMountIsNotFoundAndADroppedConnectionAnswersNothing() async throws {
        let server = try LoopbackHTTPServer { _, _ in LoopbackHTTPServer.droppedConnection }
        defer { server.stop() }
        #expect(try await exchange(port: server.port, "GET /elsewhere HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 404 "))
        #expect(try await exchange(port: server.port, "GET /sync/v1/pull HTTP/1.1\r\n\r\n") == "")
    }

    @Test func stopEndsAStreamThatNeverSendsAnything() async throws {
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let server = try LoopbackHTTPServer { _, _ in
            arrived.yield()
            return SyncHTTPResponse(status: 200, body: .stream(AsyncStream { _ in }))
        }
        let answer = Task { try await exchange(port: server.port, "GET /sync/v1/pokes HTTP/1.1\r\n\r\n") }
        _ = try await within(.seconds(20), "the request's arrival") { await arrivals.first { _ in true } }
        server.stop()
        let text = try await within(.seconds(20), "the stream's end after stop()") { try await answer.value }
        #expect(!text.contains("0\r\n\r\n"))
    }
}

/// Sends `request` to 127.0.0.1:`port` and reads the answer to its end, on a thread of its own.
func exchange(port: Int, _ request: String) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try rawExchange(port: port, request) })
        }.start()
    }
}

private func rawExchange(port: Int, _ request: String) throws -> String {
    let client = try LoopbackClientSocket(port: port)
    try client.send(request)
    return client.read()
}
