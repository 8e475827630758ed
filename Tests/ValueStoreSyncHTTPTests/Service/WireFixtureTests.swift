import Foundation
import Testing
import ValueStore
import ValueStoreSync
import ValueStoreSyncHTTP

/// The v1 wire, frozen: `Fixtures/v1/` holds bodies as the service wrote them when v1 shipped.
/// These files are frozen; every later release must decode them to these values, and the
/// service's own encoding of the values must decode to the same. Never edit a fixture to make
/// this test pass: a change to the wire is a new version beside it.
@Suite struct WireFixtureTests {
    static let epoch = UUID(uuidString: "6F1C4E2A-8B3D-4C5E-9F60-7A8B9C0D1E2F")!
    static let big = "the value is 300000 bytes, over the server's limit of 262144"

    static func stamp(_ milliseconds: Int64, _ counter: UInt32, _ replica: String) -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: counter, replica: ReplicaID(replica))
    }

    static let theme = SyncRecord(
        key: "theme", value: Data(#""dark""#.utf8), stamp: stamp(1_700_000_000_000, 0, "phone-1"), base: nil,
        policy: .lastWriterWins)
    static let draft = SyncRecord(
        key: "draft", value: nil, stamp: stamp(1_700_000_000_001, 1, "phone-1"),
        origin: stamp(1_699_999_999_000, 0, "laptop-2"), base: stamp(1_699_999_990_000, 3, "laptop-2"),
        replaces: [stamp(1_699_999_995_000, 0, "phone-1")], policy: .saveBeatsRemove, isRestoring: true)
    static let tags = SyncRecord(
        key: "tags", value: Data(#"["work"]"#.utf8), stamp: stamp(1_700_000_000_002, 0, "phone-1"),
        base: stamp(1_699_999_990_000, 0, "laptop-2"), policy: .merge, version: ServerVersion(12))
    static let quota = SyncRecord(
        key: "quota", value: Data("10".utf8), stamp: stamp(1_700_000_000_003, 0, "phone-1"),
        base: stamp(1_699_999_990_000, 1, "laptop-2"), policy: .compareAndSet)

    static var serverTheme: SyncRecord {
        var record = theme
        record.version = ServerVersion(42)
        return record
    }

    static let laptopDraft = SyncRecord(
        key: "draft", value: Data(#""Dear""#.utf8), stamp: stamp(1_700_000_000_500, 0, "laptop-2"), base: nil,
        policy: .saveBeatsRemove, version: ServerVersion(43))

    static let pushRequest = SyncPushRequest(
        account: "user-42", replica: ReplicaID("phone-1"), epoch: epoch, seen: ServerVersion(41),
        cursor: ServerVersion(40), changes: [theme, draft, tags, quota])

    static var pushResponse: SyncPushResponse {
        var merged = tags
        merged.version = ServerVersion(44)
        let outcomes: [SyncPushResponse.Outcome] = [
            .accepted(ServerVersion(42)), .overtaken(serverTheme), .lost(laptopDraft), .lost(nil),
            .mergeNeeded(merged), .mergeNeeded(nil), .superseded, .tooFarAhead, .rejected(big),
        ]
        let names = ["theme", "theme", "draft", "draft", "tags", "tags", "quota", "quota", "big"]
        let settled = names.enumerated().map { index, key in
            SyncChangeName(key: key, stamp: stamp(1_700_000_000_000 + Int64(index), 0, "phone-1"))
        }
        return SyncPushResponse(
            epoch: epoch, serverTime: 1_700_000_001_000, refusal: nil, outcomes: outcomes, settled: settled)
    }

    static let refusedPush = SyncPushResponse(
        epoch: epoch, serverTime: 1_700_000_001_000, refusal: .restored, outcomes: [])

    static let pullRequest = SyncPullRequest(
        account: "user-42", replica: ReplicaID("phone-1"), epoch: epoch, cursor: ServerVersion(40),
        seen: ServerVersion(41), limit: 500, isResync: false, archivedAfter: ServerVersion(38))

    static let pullResponse = SyncPullResponse(
        epoch: epoch, serverTime: 1_700_000_002_000, refusal: nil,
        records: [
            serverTheme, laptopDraft,
            SyncRecord(
                key: "old", value: nil, stamp: stamp(1_699_999_000_000, 2, "laptop-2"), base: nil,
                policy: .lastWriterWins, version: ServerVersion(45)),
        ],
        conflicts: [
            SyncConflict(
                key: "draft", value: Data(#""Hi""#.utf8), stamp: stamp(1_700_000_000_001, 1, "phone-1"), cause: .lost,
                winner: stamp(1_700_000_000_500, 0, "laptop-2")),
            SyncConflict(
                key: "big", value: Data(#""…""#.utf8), stamp: stamp(1_700_000_000_008, 0, "phone-1"), cause: .rejected,
                reason: big),
            SyncConflict(key: "theme", value: nil, stamp: stamp(1_690_000_000_000, 0, "phone-1"), cause: .firstSync),
            SyncConflict(
                key: "quota", value: Data("3".utf8), stamp: stamp(1_690_000_000_001, 0, "phone-1"), cause: .newEpoch),
        ],
        cursor: ServerVersion(45), head: ServerVersion(50), horizon: ServerVersion(10), isComplete: false,
        account: "user-42")

    func fixture(_ name: String) throws -> Data {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try Data(contentsOf: folder.appending(path: "v1/\(name)"))
    }

    /// A service whose remote answers `push` and `pull` with the fixtures' values.
    func service(answering push: SyncPushResponse, _ pull: SyncPullResponse) -> SyncHTTPService {
        SyncHTTPService { _ in SyncRemote(label: "fixtures", push: { _ in push }, pull: { _ in pull }) }
    }

    @Test func requestsDecodeToTheirValues() throws {
        #expect(try JSONDecoder().decode(SyncPushRequest.self, from: fixture("push-request.json")) == Self.pushRequest)
        #expect(try JSONDecoder().decode(SyncPullRequest.self, from: fixture("pull-request.json")) == Self.pullRequest)
    }

    @Test func responsesDecodeToTheirValuesAndTheServiceWritesThemSo() async throws {
        let push = try JSONDecoder().decode(SyncPushResponse.self, from: fixture("push-response.json"))
        #expect(push == Self.pushResponse)
        let refused = try JSONDecoder().decode(SyncPushResponse.self, from: fixture("push-response-refused.json"))
        #expect(refused == Self.refusedPush)
        let pull = try JSONDecoder().decode(SyncPullResponse.self, from: fixture("pull-response.json"))
        #expect(pull == Self.pullResponse)

        let service = service(answering: Self.pushResponse, Self.pullResponse)
        let account = SyncAccount(id: "user-42")
        let pushed = await service.respond(to: try Requests.http("v1/push", Self.pushRequest), account: account)
        let pulled = await service.respond(to: try Requests.http("v1/pull", Self.pullRequest), account: account)
        #expect(pushed.headers["content-type"] == "application/json")
        #expect(try JSONDecoder().decode(SyncPushResponse.self, from: Requests.bytes(of: pushed)) == push)
        #expect(try JSONDecoder().decode(SyncPullResponse.self, from: Requests.bytes(of: pulled)) == pull)
    }

    @Test func theProblemDocumentDecodesAndTheServiceWritesItSo() async throws {
        let problem = try JSONDecoder().decode(SyncHTTPProblem.self, from: fixture("problem.json"))
        #expect(
            problem
                == SyncHTTPProblem(
                    status: 429, code: .unavailable, detail: "over 600 requests a minute; retry after 3 s"))
        #expect(problem.type == "about:blank")
        #expect(problem.title == "Too Many Requests")
        let written = try Requests.bytes(of: problem.response)
        #expect(try JSONDecoder().decode(SyncHTTPProblem.self, from: written) == problem)
    }

    @Test func theEventsAndTheLongPollAnswerAreTheServicesBytes() async throws {
        let events = try fixture("events.txt")
        #expect(events == SyncPokeEvent.ready + SyncPokeEvent.poke + SyncPokeEvent.heartbeat)
        let longPoll = try JSONDecoder().decode(SyncPokeWaitAnswer.self, from: fixture("long-poll.json"))
        #expect(longPoll == SyncPokeWaitAnswer(poked: true))
    }
}
