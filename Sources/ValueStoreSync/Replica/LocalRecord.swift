import Foundation

/// One synced key on the device: its value (or removal), stamp and base, and whether the server
/// has it. Stored as one entry of the replica's files, so a local change is one durable
/// commit of one entry, its outbox mark included.
struct LocalRecord: Hashable, Sendable, Codable {
    /// The value's bytes, or `nil` for a removal.
    var value: Data?
    var stamp: HybridTimestamp
    /// The stamp it was first given, if it was stamped again (see ``SyncRecord/origin``).
    var origin: HybridTimestamp?
    /// The identity of the record this one was made on: what a push sends as its base.
    var base: HybridTimestamp?
    /// While pending: the replica's earlier pending changes to the key this one replaced.
    var replaces: [HybridTimestamp] = []
    /// While pending: whether it is a record pushed back to a server that lost it.
    var isRestoring = false
    /// While pending: the newest record of the key the server sent since the change was made,
    /// when newer than ``synced``: what the key goes back to if the change is dropped.
    var latest: SyncRecord?
    var policy: SyncRecord.Policy
    /// The server's version of this very record, once the server acknowledged or sent it; `nil`
    /// while it is pending, in the outbox.
    var version: ServerVersion?
    /// While pending: the last record the server confirmed for the key, which the change
    /// descends from (a merge's base, and what discarding the change goes back to).
    var synced: SyncRecord?

    /// Whether the change waits to be pushed.
    var isPending: Bool { version == nil }

    /// The change's name (see ``SyncRecord/identity``).
    var identity: HybridTimestamp { origin ?? stamp }

    /// A record the server sent or acknowledged.
    init(synced record: SyncRecord) {
        value = record.value
        stamp = record.stamp
        origin = record.origin
        base = record.base
        replaces = record.replaces
        policy = record.policy
        version = record.version ?? .zero
        synced = nil
    }

    /// A pending change.
    init(
        value: Data?,
        stamp: HybridTimestamp,
        base: HybridTimestamp?,
        replaces: [HybridTimestamp] = [],
        policy: SyncRecord.Policy,
        synced: SyncRecord?
    ) {
        self.value = value
        self.stamp = stamp
        self.base = base
        self.replaces = replaces
        self.policy = policy
        self.version = nil
        self.synced = synced
    }

    /// The record as the server sees it: the change to push, or the record it sent.
    func record(key: String) -> SyncRecord {
        SyncRecord(
            key: key, value: value, stamp: stamp, origin: origin, base: base, replaces: replaces, policy: policy,
            isRestoring: isRestoring, version: version)
    }

    /// The server's state this record descends from: itself when synced, its `synced` while
    /// pending.
    func confirmed(key: String) -> SyncRecord? {
        isPending ? synced : record(key: key)
    }

    /// What the key goes back to when its pending change is dropped (rejected, discarded,
    /// archived): the newest record the server sent of it, or absence.
    var fallback: LocalRecord? {
        (latest ?? synced).map(LocalRecord.init(synced:))
    }

    /// The stamps of the server's records of the key this replica knows (the one the change
    /// descends from, and the newest sent since): what a change of the key is stamped after.
    var serverStamps: [HybridTimestamp] {
        isPending ? [synced?.stamp, latest?.stamp].compactMap { $0 } : [stamp]
    }

    /// Notes a record of the key the server sent while this change is pending.
    mutating func note(_ record: SyncRecord) {
        if (record.version ?? .zero) > (latest?.version ?? synced?.version ?? .zero) {
            latest = record
        }
    }

    /// The changes a change that replaces this pending one replaces: this one's, and this one.
    func replacing() -> [HybridTimestamp] {
        Array((replaces + [identity]).suffix(16))
    }

    /// A new local change made on this record (`nil`: on nothing): its base is this record, or,
    /// while this one is still pending, the record this one was made on, since the two changes
    /// reach the server as one; and then it replaces this one too.
    static func change(
        on previous: LocalRecord?,
        key: String,
        value: Data?,
        stamp: HybridTimestamp,
        policy: SyncRecord.Policy
    ) -> LocalRecord {
        guard let previous else {
            return LocalRecord(value: value, stamp: stamp, base: nil, policy: policy, synced: nil)
        }
        if previous.isPending {
            var change = LocalRecord(
                value: value, stamp: stamp, base: previous.base, replaces: previous.replacing(), policy: policy,
                synced: previous.synced)
            change.latest = previous.latest
            return change
        }
        return LocalRecord(
            value: value, stamp: stamp, base: previous.identity, policy: policy, synced: previous.record(key: key))
    }
}

extension SyncRecord {
    /// Whether this record was made on the change named `identity`: its base, or one of the
    /// earlier changes it replaces.
    func isMade(on identity: HybridTimestamp) -> Bool {
        base == identity || replaces.contains(identity)
    }
}
