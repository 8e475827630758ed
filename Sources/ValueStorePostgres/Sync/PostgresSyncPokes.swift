#if PostgreSQL
import Foundation
import Synchronization
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
    ///
    /// The stream makes its pokes as its consumer asks for them, in the consumer's task, from
    /// the listener's log of the key: once the records table is resolved, it needs no task of
    /// its own, nor a buffer. In order, and never a poke dropped behind another (a replica skips
    /// the echo of its own push): a consumer further behind than the log keeps reads "pull now".
    func pokes(of account: String) -> AsyncStream<SyncPoke> {
        let following = SyncPokeFollowing(table: self, key: PostgresKey.identifier(account))
        return AsyncStream(unfolding: { await following.next() }, onCancel: { following.stop() })
    }
}

/// Where one stream of a sync table's pokes stands, and the pokes read from the log but not yet
/// handed out. Its consumer calls ``next()`` one call at a time.
private final class SyncPokeFollowing: Sendable {
    private enum Phase {
        /// The records table is not resolved yet: a task tries, and says "pull now" on
        /// `attempts` after each failure (a poke a pause, so the replica tries, and learns why).
        case resolving(attempts: AsyncStream<SyncPoke>, task: Task<Void, Never>?)
        /// Following the key's signals, having read its log up to `read`.
        case following(signals: AsyncStream<Void>, table: PostgresTableName, read: UInt64)
        case stopped
    }

    private struct State {
        var phase: Phase
        var waiting: [SyncPoke] = []
    }

    private let table: PostgresSyncTable
    private let key: String
    private let state: Mutex<State>

    /// Subscribes at once when the records table is resolved already; starts resolving it
    /// otherwise.
    init(table: PostgresSyncTable, key: String) {
        self.table = table
        self.key = key
        guard let resolved = PostgresResolvedTables.lookUp(table.records.spelling, client: table.client) else {
            let (attempts, attempt) = AsyncStream<SyncPoke>.makeStream()
            state = Mutex(State(phase: .resolving(attempts: attempts, task: nil)))
            let task = Task { [weak self] in
                var pause = Duration.milliseconds(50)
                while !Task.isCancelled {
                    if let resolved = try? await table.resolvedRecords() {
                        self?.follow(resolved)
                        break
                    }
                    attempt.yield(.pullNow)
                    guard self != nil, (try? await Task.sleep(for: pause)) != nil else { break }
                    pause = min(pause * 2, table.heartbeatInterval)
                }
                attempt.finish()
            }
            state.withLock { state in
                if case .resolving(let attempts, nil) = state.phase {
                    state.phase = .resolving(attempts: attempts, task: task)
                }
            }
            return
        }
        state = Mutex(State(phase: Self.subscribe(table, resolved, key)))
    }

    deinit {
        stop()
    }

    private static func subscribe(_ table: PostgresSyncTable, _ resolved: PostgresTableName, _ key: String) -> Phase {
        let (signals, read) = PostgresChanges.shared.subscribe(
            client: table.client, table: resolved, key: key, label: table.label,
            heartbeat: table.heartbeatInterval, polled: true)
        return .following(signals: signals, table: resolved, read: read)
    }

    /// Follows the resolved table from now on, after a "pull now": a pull covers what changed
    /// before the subscription, and the tries' pokes not yet read go with their stream.
    private func follow(_ resolved: PostgresTableName) {
        state.withLock { state in
            guard case .resolving = state.phase else { return }
            state.phase = Self.subscribe(table, resolved, key)
            state.waiting = [.pullNow]
        }
    }

    /// Ends the stream: its consumer stopped.
    func stop() {
        let phase = state.withLock { state in
            defer { state.phase = .stopped }
            return state.phase
        }
        if case .resolving(_, let task) = phase {
            task?.cancel()
        }
    }

    /// The next poke; `nil` once the consumer's task is cancelled, or the signals ended.
    func next() async -> SyncPoke? {
        while !Task.isCancelled {
            let (phase, waiting) = state.withLock { state in
                (state.phase, state.waiting.isEmpty ? nil : state.waiting.removeFirst())
            }
            if let waiting { return waiting }
            switch phase {
            case .stopped:
                return nil
            case .resolving(let attempts, _):
                var iterator = attempts.makeAsyncIterator()
                if let poke = await iterator.next() { return poke }
                // Resolved (the phase moved on), or the consumer was cancelled.
                if case .resolving = state.withLock({ $0.phase }) { return nil }
            case .following(let signals, let resolved, let read):
                var iterator = signals.makeAsyncIterator()
                guard await iterator.next() != nil else { return nil }
                // Each poke the listener kept since the last signal, with its author, after a
                // "pull now" when it may have missed one (or no listener follows the key); none
                // for a signal of this process's own write, which brings no notification.
                let heard = PostgresChanges.shared.notices(
                    client: table.client, table: resolved, key: key, after: read)
                let missed = heard.map(\.missed) ?? true
                let pokes = (missed ? [.pullNow] : []) + (heard?.notices.map(\.syncPoke) ?? [])
                state.withLock { state in
                    guard case .following = state.phase else { return }
                    state.phase = .following(signals: signals, table: resolved, read: heard?.last ?? read)
                    state.waiting += pokes
                }
            }
        }
        return nil
    }
}
#endif
