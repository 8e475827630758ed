import Foundation
import ValueStoreSync
import ValueStoreSyncHTTP

/// Requests and changes the service tests send, built the same way everywhere.
enum Requests {
    static let replica = ReplicaID("device-1")

    /// A change of `key` to `value` (a removal for `nil`), stamped at `tick`.
    static func change(_ key: String, _ value: Data?, tick: UInt32 = 1) -> SyncRecord {
        SyncRecord(
            key: key, value: value,
            stamp: HybridTimestamp(milliseconds: 1_700_000_000_000, counter: tick, replica: replica), base: nil,
            policy: .lastWriterWins)
    }

    /// A push of `changes` by `account`, from a replica that has seen nothing; a server refuses
    /// it (`epochChanged`) unless `epoch` is its own.
    static func push(_ changes: [SyncRecord], account: String = "user-42", epoch: UUID? = nil) -> SyncPushRequest {
        SyncPushRequest(
            account: account, replica: replica, epoch: epoch, seen: .zero, cursor: .zero, changes: changes)
    }

    /// The epoch of `account` on `server`, as a first pull learns it.
    static func epoch(of account: SyncAccount, on server: InMemorySyncServer) async throws -> UUID {
        try await server.remote(for: account).pull(pull(account: account.id)).epoch
    }

    /// A whole-state pull by `account`.
    static func pull(account: String = "user-42") -> SyncPullRequest {
        SyncPullRequest(
            account: account, replica: replica, epoch: nil, cursor: .zero, seen: .zero, limit: 500, isResync: true)
    }

    /// `body` as the HTTP request of `path`, its length declared.
    static func http(_ path: String, _ body: some Encodable) throws -> SyncHTTPRequest {
        let data = try JSONEncoder().encode(body)
        return SyncHTTPRequest(method: "POST", path: path, contentLength: data.count, body: { _ in data })
    }

    /// The body of a response answered at once.
    static func bytes(of response: SyncHTTPResponse) throws -> Data {
        guard case .bytes(let data) = response.body else {
            throw NotBytes()
        }
        return data
    }

    /// A response whose body is a stream where bytes were expected.
    struct NotBytes: Error {}

    /// The problem document of an error response.
    static func problem(of response: SyncHTTPResponse) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: try bytes(of: response)) as? [String: Any] ?? [:]
        return object.mapValues { "\($0)" }
    }
}
