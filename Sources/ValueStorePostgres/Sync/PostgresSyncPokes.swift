#if PostgreSQL
import Foundation
import ValueStore
import ValueStoreSync

// A sync table's poke is a change notification on its records table's channel whose writer is
// `sync` and whose key is the account's identifier. Since pokes name their authors, the writer
// is `sync:` and the pushing replica's id in hexadecimal UTF-8 (no spaces, which end the
// writer), and the version is the head the push reached: `42 sync:70686f6e65 user-42`. A poke
// with the plain `sync` writer (a new epoch, or an older version of this library) names no
// author and means "pull now"; older listeners take the new writer for another process's, as
// they took the old one, and signal.
extension PostgresChangeNotice {
    /// The writer of every sync table's notification, alone or followed by `:` and an author.
    static let syncWriter = "sync"

    /// The payload of a poke of `account`: by `author`'s push, which reached `head`, when both
    /// are given; "pull now" otherwise.
    static func syncPayload(account: String, author: ReplicaID? = nil, head: ServerVersion? = nil) -> String {
        guard let author, let head else { return "0 \(syncWriter) \(PostgresKey.identifier(account))" }
        let hex = author.rawValue.utf8.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return "\(head.rawValue) \(syncWriter):\(hex) \(PostgresKey.identifier(account))"
    }

    /// The poke this notification of a sync table is: its author and head when it names them,
    /// ``/ValueStoreSync/SyncPoke/pullNow`` for any other.
    var syncPoke: SyncPoke {
        let prefix = Self.syncWriter + ":"
        guard writer.hasPrefix(prefix), version > 0 else { return .pullNow }
        let hex = Array(writer.utf8.dropFirst(prefix.utf8.count))
        guard !hex.isEmpty, hex.count.isMultiple(of: 2) else { return .pullNow }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else {
                return .pullNow
            }
            bytes.append(byte)
        }
        return SyncPoke(author: ReplicaID(String(decoding: bytes, as: UTF8.self)), head: ServerVersion(version))
    }
}

extension PostgresSyncTable {
    /// The pokes of `account`: the signals of its identifier on the resolved records table's
    /// channel, and one every ``heartbeatInterval`` while the listener cannot vouch that none was
    /// missed (it cannot listen, or lost its connection), so a replica's `run()` still pulls.
    func pokes(of account: String) -> AsyncStream<SyncPoke> {
        let table = self
        let key = PostgresKey.identifier(account)
        // Unbounded, in order: a replica skips the echo of its own push, so no other poke may
        // be dropped behind one.
        return AsyncStream { continuation in
            let forwarding = Task {
                var pause = Duration.milliseconds(50)
                var found = try? await table.resolvedRecords()
                while found == nil, !Task.isCancelled {
                    // Nothing to follow yet: a poke a pause, so the replica tries, and learns why.
                    continuation.yield(.pullNow)
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, table.heartbeatInterval)
                    found = try? await table.resolvedRecords()
                }
                guard let resolved = found else { return continuation.finish() }
                let (signals, subscribed) = PostgresChanges.shared.subscribe(
                    client: table.client, table: resolved, key: key, label: table.label,
                    heartbeat: table.heartbeatInterval)
                var read = subscribed
                let feed = PostgresChanges.shared.feed(client: table.client, table: resolved)
                let polling = Task {
                    while (try? await Task.sleep(for: table.heartbeatInterval)) != nil {
                        if case .following = feed?.health {} else { continuation.yield(.pullNow) }
                    }
                }
                defer { polling.cancel() }
                for await _ in signals {
                    // Each poke the listener kept since the last signal, with its author; "pull
                    // now" when it may have missed one, or has none for this signal.
                    let heard = PostgresChanges.shared.notices(
                        client: table.client, table: resolved, key: key, after: read)
                    guard let heard, !heard.missed else {
                        read = heard?.last ?? read
                        continuation.yield(.pullNow)
                        continue
                    }
                    read = heard.last
                    for notice in heard.notices {
                        continuation.yield(notice.syncPoke)
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in forwarding.cancel() }
        }
    }
}
#endif
