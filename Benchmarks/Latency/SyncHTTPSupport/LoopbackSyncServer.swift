// The server every HTTP tool measures: the sync routes over a fresh PostgresSyncTable, served by
// Hummingbird in this process on 127.0.0.1 (a port the system picks), and the remotes that reach
// it, over HTTP or through the table directly.

import Foundation
import Hummingbird
public import PostgresNIO
public import ValueStorePostgres
public import ValueStoreSync
public import ValueStoreSyncHTTP
import ValueStoreSyncHTTPServer

/// The routes of a ``SyncHTTPService`` over a `PostgresSyncTable` of their own, served on
/// loopback, whose bearer token is the account's identifier. The rate limit is lifted: a
/// benchmark pushes far more than a device does.
public struct LoopbackSyncServer: Sendable {
    /// The table the service answers from, which the direct floors use too.
    public let table: PostgresSyncTable
    /// Where the routes are mounted: `http://127.0.0.1:PORT/sync`.
    public let url: URL
    /// The service behind the routes.
    public let service: SyncHTTPService

    /// Serves a new table named `name` (created here) through `client`, which runs.
    public static func start(client: PostgresClient, name: String) async throws -> LoopbackSyncServer {
        let table = try PostgresSyncTable(client: client, name: name)
        try await table.createIfNeeded()
        var limits = SyncHTTPLimits()
        limits.requestsPerMinutePerAccount = .max
        let service = SyncHTTPService(limits: limits, remote: table.remote(for:))
        let router = Router()
        router.addRoutes(
            service.routes(authentication: .bearer { token in SyncAccount(id: token) }), atPath: "/sync")
        let port = try await serveOnLoopback(router)
        return LoopbackSyncServer(
            table: table, url: URL(string: "http://127.0.0.1:\(port)/sync")!, service: service)
    }

    /// A remote of `account` over HTTP, hearing of changes as `pokes` says, through `transport`.
    public func http(
        for account: SyncAccount, pokes: SyncHTTPOptions.Pokes = .serverSentEvents,
        transport: SyncHTTPTransport = .urlSession()
    ) -> SyncRemote {
        Self.http(url, account: account, pokes: pokes, transport: transport)
    }

    /// A remote of `account` over HTTP to the server at `url`, from any process, through
    /// `transport` (the default one unless a row compares another).
    public static func http(
        _ url: URL, account: SyncAccount, pokes: SyncHTTPOptions.Pokes = .serverSentEvents,
        transport: SyncHTTPTransport = .urlSession()
    ) -> SyncRemote {
        var options = SyncHTTPOptions()
        options.pokes = pokes
        options.transport = transport
        return .http(url, account: account, options: options) { _ in account.id }
    }
}

/// What went wrong setting up a measurement.
public struct ValueStoreSyncHTTPBenchmarkError: Error, CustomStringConvertible {
    /// What went wrong, as a sentence.
    public var description: String

    /// An error that says `description`.
    public init(_ description: String) {
        self.description = description
    }
}

/// A push of `changes` records, each of its own key (`key-0`, `key-1`…) with a small value,
/// stamped `generation` milliseconds, by `replica` of `account`, in `epoch`.
public func pushRequest(
    account: SyncAccount, replica: ReplicaID, epoch: UUID?, generation: Int, changes: Int
) -> SyncPushRequest {
    let records = (0..<changes).map { index in
        SyncRecord(
            key: "key-\(index)", value: Data("\(generation)".utf8),
            stamp: HybridTimestamp(milliseconds: Int64(generation), counter: 0, replica: replica), base: nil,
            policy: .lastWriterWins)
    }
    return SyncPushRequest(
        account: account.id, replica: replica, epoch: epoch, seen: .zero, cursor: .zero, changes: records)
}

/// The epoch of `account` on the server `remote` reaches, which a push names: a first pull
/// gives it.
public func epoch(of account: SyncAccount, through remote: SyncRemote) async throws -> UUID {
    try await remote.pull(
        SyncPullRequest(
            account: account.id, replica: ReplicaID("bench"), epoch: nil, cursor: .zero, seen: .zero, limit: 1,
            isResync: false)
    ).epoch
}

/// Pushes `request` through `remote` and checks that every change was accepted.
public func pushAccepted(_ request: SyncPushRequest, through remote: SyncRemote) async throws {
    let response = try await remote.push(request)
    for outcome in response.outcomes {
        guard case .accepted = outcome else {
            throw ValueStoreSyncHTTPBenchmarkError("a change was not accepted: \(outcome)")
        }
    }
}
