import Foundation
package import ValueStoreSync

/// Everything a chaos check looks at in one replica, as plain `Codable` data: what the in-memory
/// schedule reads from its replicas, and what a device process of the PostgreSQL schedule prints
/// for its `dump` command.
package struct SyncReplicaDump: Codable, Sendable {
    /// The device (its folder's name) and the account.
    package var device: String
    package var account: String
    package var id: ReplicaID
    /// Every key's record, removals included; a pending change's `version` is `nil`.
    package var records: [String: SyncRecord]
    package var pendingChanges: Int
    package var rejected: [SyncConflict]
    package var archive: [SyncConflict]
    /// Whether the replica finished its first complete pull.
    package var hasPulled: Bool
    /// The server version each key descends from (``SyncReplica/syncedVersions``).
    package var syncedVersions: [String: ServerVersion]
    /// Why the last sync failed, if it did.
    package var lastError: String?

    /// What `replica`, on `device`, holds now.
    package init(device: String, replica: SyncReplica) async throws {
        self.device = device
        account = replica.account.id
        id = try await replica.id
        archive = try await replica.archivedConflicts()
        let status = replica.status
        records = replica.records
        pendingChanges = status.pendingChanges
        rejected = status.rejectedChanges
        hasPulled = replica.hasPulled
        syncedVersions = replica.syncedVersions
        lastError = status.lastError.map { "\($0)" }
    }

    /// The replica's name in the checker's words: `d1/alice`.
    package var name: String { "\(device)/\(account)" }

    /// Why the replica is not yet healed against the server's `records` of its account: what it
    /// has pending, and each key whose value differs; empty once it is quiet.
    package func unsettled(against server: [String: SyncRecord]) -> [String] {
        var found: [String] = []
        let lastError = lastError ?? "none"
        if pendingChanges != 0 {
            let pending = records.filter { $0.value.version == nil }.keys.sorted()
            found.append("\(name): pending \(pending), last error \(lastError)")
        }
        let serverValues = server.compactMapValues(\.value)
        let localValues = records.compactMapValues(\.value)
        if serverValues != localValues {
            let keys = Set(serverValues.keys).union(localValues.keys).filter { serverValues[$0] != localValues[$0] }
            found.append("\(name): differs from the server at \(keys.sorted()), last error \(lastError)")
            for key in keys.sorted() {
                found.append("  local \(records[key].map(Self.describe) ?? "none")")
                found.append("  server \(server[key].map(Self.describe) ?? "none")")
            }
        }
        return found
    }

    /// A record in one line, for the failure messages.
    package static func describe(_ record: SyncRecord) -> String {
        let value = record.value.map { String(decoding: $0, as: UTF8.self) } ?? "removed"
        let base = record.base.map { "\($0)" } ?? "none"
        let version = record.version.map { "\($0)" } ?? "pending"
        return "\(value) stamp \(record.stamp) base \(base) version \(version)"
    }
}

extension SyncReplica {
    /// The server version every key the replica holds descends from (``syncedVersion(of:)``):
    /// what the monotonic reads check follows.
    package var syncedVersions: [String: ServerVersion] {
        var versions: [String: ServerVersion] = [:]
        for key in records.keys {
            versions[key] = syncedVersion(of: key)
        }
        return versions
    }
}
