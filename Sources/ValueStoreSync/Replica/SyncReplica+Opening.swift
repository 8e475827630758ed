import Foundation
import Synchronization
import ValueStore

extension SyncReplica {
    /// The replicas whose write locks a task holds, each with that task: a write from inside a
    /// store's `update` body does not wait for itself (nor one of a replica whose update an
    /// update of another runs), and one from a task started inside the body, which inherits
    /// this, is refused while the body runs (and takes the locks once it returned).
    @TaskLocal static var writing: [ObjectIdentifier: Writer] = [:]

    struct Writer: Sendable {
        /// The task holding the locks, by its hash: compared only while ``hold`` is held, so
        /// while that task runs.
        let task: Int?
        let hold: Hold
    }

    /// Whether a writer still holds the locks: a task started inside the write keeps the
    /// task-local after the write returned.
    final class Hold: Sendable {
        private let held = Mutex(true)
        var isHeld: Bool { held.withLock { $0 } }
        func release() { held.withLock { $0 = false } }
    }

    /// The current task, by its hash, as ``Writer`` compares it.
    private static var currentTask: Int? { withUnsafeCurrentTask { $0?.hashValue } }

    /// Runs `body` once the replica is open, holding its write lock and its folder's, after
    /// taking in what other processes committed: one durable write at a time, across processes.
    func exclusively<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await open()
        return try await locked(catchingUp: true, body)
    }

    /// Runs `body` holding the write lock, then the folder's lock (``ReplicaFolderLock``) and,
    /// if `catchingUp`, after ``catchUp()``; or at once when the current task holds them.
    ///
    /// - Throws: ``/ValueStore/ValueStoreError/Code/nestedWrite`` from a task started inside a
    ///   write that holds them (an `async let` in an `update` body): without the locks its
    ///   commit could be lost to a fold the write makes, and with them it would wait for the
    ///   write that waits for it. Nothing is written.
    func locked<Result>(catchingUp: Bool, _ body: () async throws -> Result) async throws -> Result {
        let me = ObjectIdentifier(self)
        if let writer = Self.writing[me], writer.hold.isHeld {
            guard writer.task == Self.currentTask else {
                throw ValueStoreError(
                    .nestedWrite, store: label,
                    reason: "the replica was written from a task started inside a write of it (an update's body) while"
                        + " that write ran, which could lose it; nothing was written. Write from the body itself, or"
                        + " after the update returns")
            }
            return try await body()
        }
        return try await writes.withLock {
            let hold = Hold()
            defer { hold.release() }
            var writing = Self.writing
            writing[me] = Writer(task: Self.currentTask, hold: hold)
            return try await Self.$writing.withValue(writing) {
                try await files.lock.withLock {
                    if catchingUp {
                        try await catchUp()
                    }
                    return try await body()
                }
            }
        }
    }

    /// Shows the folder's state in the status before the replica opened it, read once on this
    /// thread: the records' pending marks, the archive and the rejected changes; a folder that
    /// cannot be read shows its error as the status's last error.
    func peekIfUnopened() {
        guard withState({ $0.meta == nil && !$0.hasPeeked }) else { return }
        let peeked = Result { try files.peek(for: account.id) }
        withState { state in
            guard state.meta == nil, !state.hasPeeked else { return }
            state.hasPeeked = true
            switch peeked {
            case .success(let loaded):
                state.archive = loaded.archive
                state.rejected = loaded.rejected
                state.settle(loaded.records)
            case .failure(let error):
                state.lastError = error
            }
        }
    }

    /// Opens the replica on first use: creates its folder, reads its settings file, and makes
    /// itself an identity in a new folder, or a new one in a copied folder (the folder's device
    /// and inode differ from those kept with the identity), before anything is pushed.
    @discardableResult
    func open() async throws -> ReplicaMeta {
        if let meta = withState({ $0.meta }) {
            return meta
        }
        let marker = try await BlockingIO.run { try await files.prepareFolder() }
        return try await locked(catchingUp: false) {
            if let meta = withState({ $0.meta }) {
                return meta
            }
            // The folder's I/O runs on the I/O threads (see BlockingIO).
            let loaded = try await BlockingIO.run {
                try await files.claim(for: account.id)
                return try await files.load()
            }
            var meta = loaded.meta ?? ReplicaMeta(id: .random(), marker: marker)
            if meta.marker != marker {
                // A copy: a new identity, which the server does not know; its first request is
                // answered `restored`, and it reconciles its whole state with the server's.
                meta.id = .random()
                meta.marker = marker
            }
            let stamps = loaded.records.values.map(\.stamp) + (loaded.archive + loaded.rejected).map(\.stamp)
            meta.clock.last = stamps.map(\.reading).reduce(meta.clock.last, max)
            if meta != loaded.meta && !files.journal.isReadOnly {
                // In a folder it may only read, the replica keeps its meta in memory: it reads,
                // and every save throws.
                try await BlockingIO.run { try await files.commit(ReplicaFiles.Changes(meta: meta)) }
            }
            withState { state in
                state.meta = meta
                state.clock = meta.clock
                state.archive = loaded.archive
                state.rejected = loaded.rejected
                // What a status read before the open showed goes: the folder, as loaded, is it.
                state.records = [:]
                state.syncedRemovals = []
                state.pendingSince = [:]
                if state.hasPeeked {
                    state.lastError = nil  // the peek's: no sync ran before the open
                }
                state.settle(loaded.records)
                state.publish()
            }
            return meta
        }
    }

    /// How far the journal is flushed, and its length: a crash of the machine (not of a process)
    /// can take back what lies between. For the tests that play one.
    package var journalExtent: (flushed: Int, length: Int) {
        (files.journal.flushedLength, files.journal.length)
    }

    /// When a commit's journal entry reaches the disk; the Sync guide says why each may wait.
    enum Flush {
        /// Before anyone hears of the commit: a local change, and whatever a push may send.
        case now
        /// After the stores and streams heard of it, before the commit returns: records pulled
        /// from the server, which a crash can take back only until the next pull.
        case afterAnnouncing
        /// With the next commit that flushes: an acknowledgement, whose change, should a crash
        /// take it back, is pushed again and settled by the server as the same change.
        case withTheNext
    }

    /// Commits `changes` in one durable write (unless `writing` is false: the meta then changes
    /// in memory only; `flush` says when it is flushed), then makes them the replica's state in
    /// memory: the pending marks follow the records, the status and conflict streams hear of it
    /// (`conflicts` are the newly archived ones), and the stores whose value changed wake.
    /// `adjusting` runs in the same lock, after the records were taken in.
    func commit(
        _ changes: ReplicaFiles.Changes,
        announcing conflicts: [SyncConflict] = [],
        writing: Bool = true,
        flush: Flush = .now,
        adjusting: (_ state: inout ReplicaState) -> Void = { _ in }
    ) async throws {
        if writing {
            try await BlockingIO.run { try await files.commit(changes, flushing: flush == .now) }
        }
        let signalled = withState { state in
            let signalled = state.changedValues(changes.records)
            if let meta = changes.meta {
                state.meta = meta
                state.clock = meta.clock
            }
            if let archive = changes.archive {
                state.archive = archive
            }
            if let rejected = changes.rejected {
                state.rejected = rejected
            }
            state.settle(changes.records)
            adjusting(&state)
            state.publish(conflicts: conflicts)
            return signalled
        }
        signal(signalled)
        if writing && flush == .afterAnnouncing {
            try await BlockingIO.run { try await files.journal.flush() }
        }
    }

    /// Wakes the stores' `changes()` of `keys`.
    func signal(_ keys: [String]) {
        guard !keys.isEmpty else { return }
        let broadcasters = withState { state in keys.compactMap { state.keyChanges[$0] } }
        for broadcaster in broadcasters {
            broadcaster.signalAll()
        }
    }

    /// The broadcaster of `key`'s stores, made on first use.
    func keyChanges(_ key: String) -> ChangeBroadcaster {
        withState { state in
            if let broadcaster = state.keyChanges[key] {
                return broadcaster
            }
            let broadcaster = ChangeBroadcaster()
            state.keyChanges[key] = broadcaster
            return broadcaster
        }
    }

    /// Sets the phase and tells the status streams.
    func enter(_ phase: SyncStatus.Phase) {
        withState { state in
            guard state.phase != phase else { return }
            state.phase = phase
            state.publish()
        }
    }
}

extension ReplicaState {
    /// The keys whose value (a removal is no value) differs between the records now and
    /// `changed`.
    func changedValues(_ changed: [String: LocalRecord?]) -> [String] {
        changed.compactMap { key, record in
            records[key]?.value == record?.value ? nil : key
        }
    }
}

extension SyncReplica {
    /// A key's record as the replica holds it, its `version` `nil` while pending; for tests'
    /// checks.
    package func record(for key: String) -> SyncRecord? {
        withState { $0.records[key]?.record(key: key) }
    }

    /// Every key's record, as ``record(for:)``.
    package var records: [String: SyncRecord] {
        withState { state in
            Dictionary(uniqueKeysWithValues: state.records.map { ($0.key, $0.value.record(key: $0.key)) })
        }
    }

    /// The server version a pending key's change descends from, or a synced key's own: what a
    /// test checks never goes back.
    package func syncedVersion(of key: String) -> ServerVersion? {
        withState { state in
            guard let record = state.records[key] else { return nil }
            return record.isPending ? record.synced?.version : record.version
        }
    }
}

extension SyncReplica {
    /// Whether the replica finished its first complete pull; for tests.
    package var hasPulled: Bool {
        withState { $0.meta?.hasPulled ?? false }
    }
}
