import Foundation
import Synchronization

extension SettingsFile {
    /// Applies `changes` (a `nil` node removes its key) in the next group commit and returns once
    /// that commit is durable.
    @usableFromInline
    func write(_ changes: [Change]) async throws {
        if let open = Self.openTransaction, open.path == file.path, try open.join(changes, from: self, store: label) {
            // Joined the transaction this task has open on the file, through this object or
            // another over the same path; it commits with it. A task started in the body throws
            // `nestedWrite` while the body runs, and once the transaction closed (it inherits the
            // task-local) commits on its own.
            return
        }
        // Watching from before the first write: a change another process makes once the commit
        // read the file must make the entries it leaves be read again.
        startWatching()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let leads = state.withLock { state in
                state.pending.append(PendingWrite(changes: changes, continuation: continuation))
                guard !state.isCommitting else { return false }
                state.isCommitting = true
                return true
            }
            if leads {
                // The commits block, so they run on the I/O threads (see BlockingIO); the callers
                // wait on no thread. They run as this file's writer, so its own watch skips their
                // signals, and outside any transaction the leading writer's task has open.
                ChangeOrigin.$writer.withValue(writer) {
                    Self.$openTransaction.withValue(nil) {
                        Task(executorPreference: BlockingIO.executor) { await self.commitPendingWrites() }
                    }
                }
            }
        }
    }

    /// Commits the waiting writes, all at once, until none are left; writes that arrive during a
    /// commit form the next one.
    private func commitPendingWrites() async {
        while true {
            let writes = state.withLock { state -> [PendingWrite] in
                let writes = state.pending
                state.pending = []
                if writes.isEmpty {
                    state.isCommitting = false
                }
                return writes
            }
            if writes.isEmpty {
                return
            }
            do {
                try await commit(writes.flatMap(\.changes))
                for write in writes {
                    write.continuation.resume()
                }
            } catch {
                for write in writes {
                    write.continuation.resume(throwing: error)
                }
            }
        }
    }

    /// One durable group commit: applies the changes in order to the file's entries and writes
    /// the result if it differs. The entries are encoded before the file's locks are taken, from
    /// the contents this process knows; under the locks, the file is checked to still hold those
    /// bytes, and only when it does not are the changes applied again to what it holds and
    /// encoded there. So a commit holds the locks for a read, a comparison and a durable write,
    /// not for the encoding, unless another writer got in first.
    private func commit(_ changes: [Change]) async throws {
        do {
            let known = try await startingContents()
            let prepared = try await prepare(changes, on: known)
            try await file.exclusively { _ in
                let data = try await file.readConcurrently()
                let current = data == known.data ? known : try await parseConcurrently(data)
                let next = current.data == known.data ? prepared : try await prepare(changes, on: current)
                if let encoded = next.data {
                    try await writeConcurrently(encoded)
                    replaceEntries(with: Contents(data: encoded, entries: next.entries))
                } else {
                    replaceEntries(with: current)
                }
                watchAgainIfTheDirectoryWasMissing()
            }
        } catch {
            // The file may have changed in ways this process does not know; read it again.
            replaceEntries(with: nil)
            throw error
        }
    }

    /// `changes` applied to `contents`, encoded off the caller's executor when they change
    /// anything (`data` is `nil` when they change nothing).
    @concurrent private func prepare(_ changes: [Change], on contents: Contents) async throws -> (
        entries: Entries, data: Data?
    ) {
        var entries = contents.entries
        for change in changes {
            entries[change.key] = change.node
        }
        return (entries, entries == contents.entries ? nil : encode(entries))
    }

    /// Runs `body` on the file's current entries, then writes them durably if `body` changed
    /// them, unless the file changed meanwhile: then `body` runs again on the new entries. Nothing
    /// is written when the file is damaged or `body` throws.
    ///
    /// No lock is held while `body` runs, in this process or across processes, since it may await
    /// anything: iOS terminates a suspended app that holds a file lock in an app-group container.
    /// The commit takes the locks, checks that the file still holds the bytes `body` started
    /// from, and writes; so a body that awaits a write to the same file never deadlocks.
    ///
    /// Transactions that give `turnOf` take turns with the others of the same key in this
    /// process, through any ``SettingsFile`` over the path: one at a time runs its body and
    /// commits, the others wait, so they do not make each other run again.
    @usableFromInline
    func transaction<Result>(
        turnOf key: PropertyListKey? = nil,
        _ body: (_ entries: inout Entries) async throws -> Result
    ) async throws -> Result {
        if let open = Self.openTransaction, open.path == file.path,
            let result = try await open.run(body, from: self, store: label)
        {
            // Inside a transaction this task has open on the file (an update's body that updates
            // another key, a move between two keys): join it.
            return result
        }
        let running = UpdateBody()
        guard let key else {
            return try await runTransaction(body, running)
        }
        return try await Self.updateTurns.withTurn(
            UpdateTurn(path: file.path, key: key), store: label, heldFor: running
        ) {
            try await runTransaction(body, running)
        }
    }

    /// One update of a key of a file at a time in this process.
    private struct UpdateTurn: Hashable, Sendable {
        let path: String
        let key: PropertyListKey
    }

    private static let updateTurns = TurnLocks<UpdateTurn>()

    /// ``transaction(turnOf:_:)`` outside any other transaction, its body run as `running`.
    /// After the file was found changed by this process, the next attempt holds the path's
    /// turn (see ``PathLocks``), so that this process's writes wait for its commit.
    private func runTransaction<Result>(
        _ body: (_ entries: inout Entries) async throws -> Result,
        _ running: UpdateBody
    ) async throws -> Result {
        startWatching()
        var base = try await startingContents()
        var ownConflicts = 0
        while true {
            let outcome: TransactionAttempt<Result>
            if ownConflicts == 0 {
                outcome = try await attempt(body, running, on: base, inHeldTurn: false)
            } else {
                outcome = try await file.inTurn(heldFor: running) {
                    // Read again in the turn: a commit of this process may have landed since
                    // `base` was read, before the turn began; during it, only a write the body
                    // awaits can.
                    let current = try await readContentsConcurrently()
                    return try await attempt(body, running, on: current, inHeldTurn: true)
                }
            }
            switch outcome {
            case .done(let result):
                return result
            case .changed(let current, let byThisProcess):
                base = current
                ownConflicts = byThisProcess ? ownConflicts + 1 : 0
            }
            try DurableFile.refuseAfter(ownConflicts: ownConflicts, store: label)
        }
    }

    private enum TransactionAttempt<Result> {
        /// The transaction committed, or changed nothing, and returned this.
        case done(Result)
        /// The file changed since `base` was read: these are its contents now.
        case changed(Contents, byThisProcess: Bool)
    }

    /// Runs `body` once on `base`'s entries and commits what it changed.
    private func attempt<Result>(
        _ body: (_ entries: inout Entries) async throws -> Result,
        _ running: UpdateBody,
        on base: Contents,
        inHeldTurn: Bool
    ) async throws -> TransactionAttempt<Result> {
        let open = OpenTransaction(path: file.path, entries: base.entries, ownedByCurrentTask: ())
        // The body runs as its caller, not as this file's writer: a stream it starts must
        // hear this file's commits.
        let result: Result
        do {
            result = try await running.run {
                try await Self.$openTransaction.withValue(open) {
                    try await open.runAsOwner(body)
                }
            }
        } catch {
            _ = open.close()
            throw error
        }
        let (entries, others) = open.close()
        if entries == base.entries {
            return .done(result)
        }
        switch try await commit(entries, ifUnchangedSince: base, inHeldTurn: inHeldTurn) {
        case .committed(let contents):
            // Other objects over the path whose writes joined know their commit at once.
            for other in others where other !== self {
                other.replaceEntries(with: contents)
            }
            return .done(result)
        case .changed(let current, let byThisProcess):
            return .changed(current, byThisProcess: byThisProcess)
        }
    }

    /// The entries a transaction or a commit starts from: from memory when known, else read
    /// without a lock, on the I/O threads.
    private func startingContents() async throws -> Contents {
        if let known = state.withLock({ state in state.entries.map { Contents(data: state.data, entries: $0) } }) {
            return known
        }
        return try await readContentsConcurrently()
    }

    private enum CommitOutcome {
        /// The entries were written (or were already on disk) and are now known.
        case committed(Contents)
        /// The file changed since the transaction read it: these are its contents now, and
        /// whether this process wrote it last.
        case changed(Contents, byThisProcess: Bool)
    }

    /// Writes `entries` under the file's locks if the file still holds `base`'s bytes, on the
    /// I/O threads (see ``BlockingIO``). `inHeldTurn`: the caller holds this process's lock for
    /// the path already.
    private func commit(
        _ entries: Entries,
        ifUnchangedSince base: Contents,
        inHeldTurn: Bool
    ) async throws -> CommitOutcome {
        try await BlockingIO.run {
            try await commitConcurrently(entries, ifUnchangedSince: base, inHeldTurn: inHeldTurn)
        }
    }

    /// ``commit(_:ifUnchangedSince:inHeldTurn:)`` off the caller's executor.
    @concurrent private func commitConcurrently(
        _ entries: Entries,
        ifUnchangedSince base: Contents,
        inHeldTurn: Bool
    ) async throws -> CommitOutcome {
        do {
            // Encoded before the locks are taken: under them, only a read, a comparison and the
            // durable write.
            let encoded = encode(entries)
            return try await ChangeOrigin.$writer.withValue(writer) {
                try await file.exclusively(inHeldTurn: inHeldTurn) { _ in
                    let data = try await file.readConcurrently()
                    guard data == base.data else {
                        return .changed(
                            try await parseConcurrently(data), byThisProcess: try file.lastWriterIsThisProcess())
                    }
                    try await writeConcurrently(encoded)
                    let contents = Contents(data: encoded, entries: entries)
                    replaceEntries(with: contents)
                    watchAgainIfTheDirectoryWasMissing()
                    return .committed(contents)
                }
            }
        } catch {
            // The file may have changed in ways this process does not know; read it again.
            replaceEntries(with: nil)
            throw error
        }
    }

    /// Writes the file durably, off the caller's executor.
    @concurrent private func writeConcurrently(_ data: Data) async throws {
        try file.write(data)
    }
}
