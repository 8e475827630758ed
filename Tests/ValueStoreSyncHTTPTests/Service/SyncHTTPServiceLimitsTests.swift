import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP

/// What the service refuses, and that it refuses it before the backend or the body is touched.
@Suite struct SyncHTTPServiceLimitsTests {
    let account = SyncAccount(id: "user-42")

    /// A service over a recording remote, with the default limits changed by `change`.
    func service(_ change: (inout SyncHTTPLimits) -> Void) -> (SyncHTTPService, RecordingRemote) {
        var limits = SyncHTTPLimits()
        change(&limits)
        let recording = RecordingRemote()
        return (SyncHTTPService(limits: limits, remote: recording.remote(for:)), recording)
    }

    @Test func aDeclaredLengthOverTheLimitIs413BeforeTheBodyIsRead() async throws {
        let (service, recording) = service { $0.maximumRequestBytes = 100 }
        let read = Atomic<Bool>(false)
        let data = try JSONEncoder().encode(Requests.push([]))
        let request = SyncHTTPRequest(
            method: "POST", path: "v1/push", contentLength: 101,
            body: { _ in
                read.store(true, ordering: .relaxed)
                return data
            })
        let response = await service.respond(to: request, account: account)
        #expect(response.status == 413)
        #expect(try Requests.problem(of: response)["code"] == "invalidConfiguration")
        #expect(read.load(ordering: .relaxed) == false)
        #expect(recording.pushes.isEmpty)
    }

    @Test func aBodyTooLargeForTheAdapterIs413() async throws {
        let (service, recording) = service { $0.maximumRequestBytes = 100 }
        let asked = Atomic<Int>(0)
        let request = SyncHTTPRequest(
            method: "POST", path: "v1/push",
            body: { maximumBytes in
                asked.store(maximumBytes, ordering: .relaxed)
                throw SyncHTTPRequest.BodyTooLarge()
            })
        let response = await service.respond(to: request, account: account)
        #expect(response.status == 413)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(asked.load(ordering: .relaxed) == 100)
        #expect(recording.pushes.isEmpty)
    }

    /// A key no server can keep (U+0000, which PostgreSQL's text cannot hold, or over 1,024
    /// bytes, more than its index takes) is rejected alone: the rest of the push goes through,
    /// where the whole statement would fail at the database, and again at every retry.
    @Test func keysNoServerCanKeepAreRejectedAndTheRestGoToTheServer() async throws {
        let (service, recording) = service { _ in }
        let long = String(repeating: "k", count: 1_025)
        let changes = [
            Requests.change("a\u{0}b", Data("x".utf8)), Requests.change("ok", Data("x".utf8)),
            Requests.change(long, Data("x".utf8)), Requests.change(String(long.dropLast()), Data("x".utf8)),
            // 1,024 bytes as sent, 3,072 in the canonical composition the servers keep.
            Requests.change(String(repeating: "\u{1D160}", count: 256), Data("x".utf8)),
        ]
        let epoch = try await Requests.epoch(of: account, on: recording.server)
        let response = await service.respond(
            to: try Requests.http("v1/push", Requests.push(changes, epoch: epoch)), account: account)
        #expect(response.status == 200)
        let answer = try JSONDecoder().decode(SyncPushResponse.self, from: try Requests.bytes(of: response))
        try #require(answer.outcomes.count == 5)
        #expect(answer.outcomes[4] == .rejected("the key is 3072 bytes, over the 1024 a synced key may take"))
        #expect(answer.outcomes[0] == .rejected("the key holds U+0000, which a database's text cannot"))
        #expect(answer.outcomes[2] == .rejected("the key is 1025 bytes, over the 1024 a synced key may take"))
        #expect(recording.pushes.map { $0.changes.map(\.key) } == [["ok", String(long.dropLast())]])
    }

    @Test func valuesOverTheLimitAreRejectedAndTheRestGoToTheServerInOrder() async throws {
        let (service, recording) = service { $0.maximumValueBytes = 8 }
        let changes = [
            Requests.change("a", Data("small".utf8)),
            Requests.change("b", Data("nine byte".utf8)),
            Requests.change("c", Data("12345678".utf8)),
            Requests.change("d", nil),
            Requests.change("e", Data(repeating: 1, count: 100)),
        ]
        let epoch = try await Requests.epoch(of: account, on: recording.server)
        let push = Requests.push(changes, epoch: epoch)
        let response = await service.respond(to: try Requests.http("v1/push", push), account: account)
        #expect(response.status == 200)
        let answer = try JSONDecoder().decode(SyncPushResponse.self, from: try Requests.bytes(of: response))
        #expect(answer.refusal == nil)
        #expect(answer.settled == changes.map(SyncChangeName.init(naming:)))
        try #require(answer.outcomes.count == 5)
        #expect(answer.outcomes[1] == .rejected("the value is 9 bytes, over the server's limit of 8"))
        #expect(answer.outcomes[4] == .rejected("the value is 100 bytes, over the server's limit of 8"))
        for index in [0, 2, 3] {
            guard case .accepted = answer.outcomes[index] else {
                Issue.record("change \(index) was answered \(answer.outcomes[index])")
                continue
            }
        }
        #expect(recording.pushes.map { $0.changes.map(\.key) } == [["a", "c", "d"]])
        #expect(recording.server.state(of: account)?.records.keys.sorted() == ["a", "c", "d"])
    }

    @Test func aPushOfOnlyOversizedValuesIsAnsweredWithTheServersEpoch() async throws {
        let (service, recording) = service { $0.maximumValueBytes = 1 }
        let change = Requests.change("a", Data("ab".utf8))
        let epoch = try await Requests.epoch(of: account, on: recording.server)
        let push = Requests.push([change], epoch: epoch)
        let response = await service.respond(to: try Requests.http("v1/push", push), account: account)
        let answer = try JSONDecoder().decode(SyncPushResponse.self, from: try Requests.bytes(of: response))
        #expect(answer.refusal == nil)
        #expect(answer.epoch == epoch)
        #expect(answer.outcomes == [.rejected("the value is 2 bytes, over the server's limit of 1")])
        #expect(answer.settled == [SyncChangeName(naming: change)])
        #expect(recording.server.state(of: account)?.records.isEmpty ?? true)
    }

    /// A service whose remote answers every push with `answer`, and that rejects values over a byte.
    func service(answering answer: SyncPushResponse) -> SyncHTTPService {
        var limits = SyncHTTPLimits()
        limits.maximumValueBytes = 1
        let remote = SyncRemote(
            label: "fixed", push: { _ in answer }, pull: { _ in throw CancellationError() })
        return SyncHTTPService(limits: limits, remote: { _ in remote })
    }

    @Test func aRefusalOfThePushIsPassedOnWithNoOutcomes() async throws {
        let refused = SyncPushResponse(epoch: UUID(), serverTime: 0, refusal: .restored, outcomes: [])
        let push = Requests.push([Requests.change("a", Data("ab".utf8)), Requests.change("b", nil)])
        let response = await service(answering: refused).respond(
            to: try Requests.http("v1/push", push), account: account)
        #expect(try JSONDecoder().decode(SyncPushResponse.self, from: try Requests.bytes(of: response)) == refused)
    }

    @Test func anAnswerWithoutAnOutcomePerForwardedChangeIsOutcomeUnknown() async throws {
        let short = SyncPushResponse(epoch: UUID(), serverTime: 0, refusal: nil, outcomes: [])
        let push = Requests.push([Requests.change("a", Data("ab".utf8)), Requests.change("b", nil)])
        let response = await service(answering: short).respond(to: try Requests.http("v1/push", push), account: account)
        #expect(response.status == 504)
        #expect(try Requests.problem(of: response)["code"] == "outcomeUnknown")
    }

    @Test func requestsOverTheRateAre429WithRetryAfterForThatAccountOnly() async throws {
        let (service, recording) = service { $0.requestsPerMinutePerAccount = 2 }
        for _ in 0..<2 {
            let response = await service.respond(to: try Requests.http("v1/pull", Requests.pull()), account: account)
            #expect(response.status == 200)
        }
        let limited = await service.respond(to: try Requests.http("v1/pull", Requests.pull()), account: account)
        #expect(limited.status == 429)
        #expect(try Requests.problem(of: limited)["code"] == "unavailable")
        let retryAfter = try #require(limited.headers["retry-after"].flatMap { Int($0) })
        #expect((1...30).contains(retryAfter))
        #expect(recording.pulls.count == 2)
        let other = await service.respond(
            to: try Requests.http("v1/pull", Requests.pull(account: "user-7")), account: SyncAccount(id: "user-7"))
        #expect(other.status == 200)
    }

    @Test func anotherAccountsRequestIsForbiddenBeforeAnyBackendCall() async throws {
        let recording = RecordingRemote()
        let service = SyncHTTPService(remote: recording.remote(for:))
        let push = try Requests.http("v1/push", Requests.push([Requests.change("a", nil)], account: "someone-else"))
        let pull = try Requests.http("v1/pull", Requests.pull(account: "someone-else"))
        let pokes = SyncHTTPRequest(method: "GET", path: "v1/pokes", query: ["account": "someone-else"])
        let wait = SyncHTTPRequest(method: "GET", path: "v1/pokes", query: ["account": "someone-else", "wait": "1"])
        for request in [push, pull, pokes, wait] {
            let response = await service.respond(to: request, account: account)
            #expect(response.status == 403, "\(request.path) \(request.query)")
            #expect(try Requests.problem(of: response)["code"] == "forbidden")
        }
        #expect(recording.pushes.isEmpty)
        #expect(recording.pulls.isEmpty)
        #expect(recording.subscriptions == 0)
    }

    @Test func noAccountIs401AskingForABearerToken() async throws {
        let service = SyncHTTPService(remote: RecordingRemote().remote(for:))
        let response = await service.respond(to: try Requests.http("v1/pull", Requests.pull()), account: nil)
        #expect(response.status == 401)
        #expect(response.headers["www-authenticate"] == "Bearer")
        #expect(try Requests.problem(of: response)["code"] == "unauthorized")
    }

    @Test func anUnknownRouteIs404() async throws {
        let service = SyncHTTPService(remote: RecordingRemote().remote(for:))
        let response = await service.respond(to: SyncHTTPRequest(method: "GET", path: "v1/push"), account: account)
        #expect(response.status == 404)
        #expect(try Requests.problem(of: response)["code"] == "notFound")
    }

    @Test func aBackendFailureIs503() async throws {
        let failing = SyncRemote(
            label: "down", push: { _ in throw ValueStoreError(.unavailable, store: "down", reason: "no database") },
            pull: { _ in throw CancellationError() })
        let service = SyncHTTPService(remote: { _ in failing })
        let push = await service.respond(to: try Requests.http("v1/push", Requests.push([])), account: account)
        let pull = await service.respond(to: try Requests.http("v1/pull", Requests.pull()), account: account)
        #expect(push.status == 503)
        #expect(pull.status == 503)
        #expect(try Requests.problem(of: push)["detail"] == "no database")
    }
}
