import Foundation
import Synchronization
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreTestSupport

@testable import ValueStoreSyncHTTP

/// Pushes that do not fit: split under the client's limit, halved on a 413, and a change too
/// large to go alone rejected, kept in the status, and never sent again.
@Suite(.timeLimit(.minutes(1))) struct SyncHTTPPushTests {
    /// A server that notes each push it answers.
    static func serving(_ sandbox: HTTPSandbox, _ pushes: SeenRequests, refusingOver limit: Int = .max) throws
        -> LoopbackHTTPServer
    {
        try LoopbackHTTPServer { request, token in
            guard request.path == "v1/push" else { return await sandbox.respond(to: request) }
            // A proxy in front: over its limit, 413 before the body is read.
            if let length = request.contentLength, length > limit {
                return problem(413, .invalidConfiguration)
            }
            return await sandbox.respond(to: pushes.noting(request, token: token))
        }
    }

    /// A 200 answer whose body is `body` as JSON.
    static func answer(_ body: some Encodable) -> SyncHTTPResponse {
        SyncHTTPResponse(
            status: 200, headers: ["content-type": "application/json"],
            body: .bytes((try? JSONEncoder().encode(body)) ?? Data()))
    }

    /// `count` changes of 600 bytes each, stamped by `replica` one after another.
    static func notes(_ count: Int, of replica: ReplicaID) -> [SyncRecord] {
        (0..<count).map { index in
            SyncRecord(
                key: "note-\(index)", value: Data(String(repeating: "x", count: 600).utf8),
                stamp: HybridTimestamp(milliseconds: 1_000, counter: UInt32(index), replica: replica), base: nil,
                policy: .lastWriterWins)
        }
    }

    static func keys(of push: SeenRequests.Seen) throws -> [String] {
        try JSONDecoder().decode(SyncPushRequest.self, from: push.body).changes.map(\.key)
    }

    @Test func aPushOverTheRequestLimitGoesAsSeveralEachUnderIt() async throws {
        try await HTTPSandbox.with { sandbox in
            let pushes = SeenRequests()
            let server = try Self.serving(sandbox, pushes)
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.maximumRequestBytes = 4_000
            let replica = try sandbox.replica("phone", remote: sandbox.remote(server.url, options: options))
            for index in 0..<12 {
                try await replica.store("note-\(index)", as: String.self).save(String(repeating: "x", count: 600))
            }
            try await replica.syncNow()
            #expect(replica.status.pendingChanges == 0)
            #expect(sandbox.server.state(of: sandbox.account)?.records.count == 12)
            #expect(pushes.all.count > 1)
            #expect(pushes.all.allSatisfy { $0.body.count <= 4_000 })
        }
    }

    @Test func aPushAProxyRefusesAsTooLargeIsHalvedUntilEveryChangeIsAcknowledged() async throws {
        try await HTTPSandbox.with { sandbox in
            let pushes = SeenRequests()
            let server = try Self.serving(sandbox, pushes, refusingOver: 3_000)
            defer { server.stop() }
            let replica = try sandbox.replica("phone", remote: sandbox.remote(server.url))
            for index in 0..<12 {
                try await replica.store("note-\(index)", as: String.self).save(String(repeating: "x", count: 600))
            }
            try await replica.syncNow()
            #expect(replica.status.pendingChanges == 0)
            #expect(replica.status.rejectedChanges.isEmpty)
            #expect(sandbox.server.state(of: sandbox.account)?.records.count == 12)
            #expect(Set(try pushes.all.flatMap(Self.keys)).count == 12)
        }
    }

    @Test(arguments: [false, true])
    func aChangeTooLargeToGoAloneIsRejectedKeptAndNeverSentAgain(refusedByAProxy: Bool) async throws {
        try await HTTPSandbox.with { sandbox in
            let pushes = SeenRequests()
            let server = try Self.serving(sandbox, pushes, refusingOver: refusedByAProxy ? 3_000 : .max)
            defer { server.stop() }
            var options = HTTPSandbox.options()
            if !refusedByAProxy { options.maximumRequestBytes = 3_000 }
            let replica = try sandbox.replica("phone", remote: sandbox.remote(server.url, options: options))
            try await replica.store("photo", as: String.self).save(String(repeating: "x", count: 5_000))
            try await replica.store("theme", as: String.self).save("dark")
            try await replica.syncNow()
            let rejected = replica.status.rejectedChanges
            #expect(rejected.map(\.key) == ["photo"])
            #expect(rejected.first?.value != nil)
            #expect(replica.status.pendingChanges == 0)
            #expect(sandbox.server.state(of: sandbox.account)?.records.keys.sorted() == ["theme"])
            let before = pushes.all.count
            try await replica.store("theme", as: String.self).save("light")
            try await replica.syncNow()
            let later = try pushes.all.dropFirst(before).flatMap(Self.keys)
            #expect(later == ["theme"])
        }
    }

    @Test func aSplitPushWhosePartIsRefusedAnswersWithThatRefusal() async throws {
        try await HTTPSandbox.with { sandbox in
            let pushes = SeenRequests()
            let refusal = SyncPushResponse(epoch: UUID(), serverTime: 1_000, refusal: .resyncNeeded, outcomes: [])
            let server = try LoopbackHTTPServer { request, token in
                let noted = await pushes.noting(request, token: token)
                guard pushes.all.count > 1 else { return await sandbox.respond(to: noted) }
                return Self.answer(refusal)
            }
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.maximumRequestBytes = 4_000
            let phone = ReplicaID("phone")
            let changes = Self.notes(12, of: phone)
            let first = try await sandbox.server.remote(for: sandbox.account).pull(
                SyncPullRequest(
                    account: sandbox.account.id, replica: phone, epoch: nil, cursor: ServerVersion(0),
                    seen: ServerVersion(0), limit: 10, isResync: true))
            let request = SyncPushRequest(
                account: sandbox.account.id, replica: phone, epoch: first.epoch, seen: ServerVersion(0),
                cursor: ServerVersion(0), changes: changes)
            let response = try await sandbox.remote(server.url, options: options).push(request)
            #expect(response == refusal)
            #expect(pushes.all.count == 2)  // nothing sent after the refused part
        }
    }

    /// An answer without change names (an older server) is counted against its own part: one
    /// part answered with an outcome too many and the next with one too few is `outcomeUnknown`,
    /// never two outcomes paired with the wrong changes.
    @Test func eachPartsOutcomesAreCountedAgainstItsOwnChanges() async throws {
        try await HTTPSandbox.with { sandbox in
            let pushes = SeenRequests()
            let server = try LoopbackHTTPServer { request, token in
                guard request.path == "v1/push" else { return await sandbox.respond(to: request) }
                let real = await sandbox.respond(to: pushes.noting(request, token: token))
                guard var answer = try? JSONDecoder().decode(SyncPushResponse.self, from: Requests.bytes(of: real))
                else { return real }
                answer.settled = nil
                answer.outcomes = pushes.all.count == 1 ? answer.outcomes + answer.outcomes : []
                return Self.answer(answer)
            }
            defer { server.stop() }
            var options = HTTPSandbox.options()
            options.maximumRequestBytes = 1_200
            let phone = ReplicaID("phone")
            let changes = Self.notes(2, of: phone)
            let epoch = try await Requests.epoch(of: sandbox.account, on: sandbox.server)
            let request = SyncPushRequest(
                account: sandbox.account.id, replica: phone, epoch: epoch, seen: ServerVersion(0),
                cursor: ServerVersion(0), changes: changes)
            let error = await #expect(throws: ValueStoreError.self) {
                try await sandbox.remote(server.url, options: options).push(request)
            }
            #expect(error?.code == .outcomeUnknown)
            #expect(pushes.all.count == 1)
        }
    }
}
