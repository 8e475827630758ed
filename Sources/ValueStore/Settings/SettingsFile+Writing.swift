import Foundation
import Synchronization

extension SettingsFile {
    /// Applies `changes` (a `nil` node removes its key) in the next group commit and returns once
    /// that commit is durable.
    @usableFromInline
    func write(_ changes: [(key: String, node: PropertyListNode?)]) async throws {
        if let open = Self.openTransaction, open.path == file.path, open.join(changes, from: self) {
            // Joined the transaction this task has open on the file, through this object or
            // another over the same path; it commits with it. A task that outlived the
            // transaction (it inherits the task-local) commits on its own.
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let leads = state.withLock { state in
                state.pending.append(PendingWrite(changes: changes, continuation: continuation))
                guard !state.isCommitting else { return false }
                state.isCommitting = true
                return true
            }
            if leads {
                // The commits block, so they run on the global executor; the callers wait. They
                // run as this file's writer, so its own watch skips their signals, and outside any
                // transaction the leading writer's task has open.
                ChangeOrigin.$writer.withValue(writer) {
                    Self.$openTransaction.withValue(nil) {
                        Task { await self.commitPendingWrites() }
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

    /// One durable group commit under the file's locks: reads the file as it is now, applies the
    /// changes in order, and writes the result if it differs. No code but this runs under them.
    private func commit(_ changes: [(key: String, node: PropertyListNode?)]) async throws {
        do {
            try await file.exclusively { _ in
                let current = try await readContentsConcurrently()
                var entries = current.entries
                for change in changes {
                    entries[change.key] = change.node
                }
                if entries != current.entries {
                    let written = try await storeConcurrently(entries)
                    replaceEntries(with: Contents(data: written, entries: entries))
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

    /// Runs `body` on the file's current entries, then writes them durably if `body` changed
    /// them, unless the file changed meanwhile: then `body` runs again on the new entries. Nothing
    /// is written when the file is damaged or `body` throws.
    ///
    /// No lock is held while `body` runs, in this process or across processes, since it may await
    /// anything: iOS terminates a suspended app that holds a file lock in an app-group container.
    /// The commit takes the locks, checks that the file still holds the bytes `body` started
    /// from, and writes; so a body that awaits a write to the same file never deadlocks.
    @usableFromInline
    func transaction<Result>(
        _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result
    ) async throws -> Result {
        if let open = Self.openTransaction, open.path == file.path,
            let result = try await open.run(body, from: self)
        {
            // Inside a transaction this task has open on the file (an update's body that updates
            // another key, a move between two keys): join it.
            return result
        }
        startWatching()
        var base = try await startingContents()
        while true {
            let open = OpenTransaction(path: file.path, entries: base.entries)
            // The body runs as its caller, not as this file's writer: a stream it starts must
            // hear this file's commits.
            let result: Result
            do {
                result = try await Self.$openTransaction.withValue(open) {
                    try await open.runAsOwner(body)
                }
            } catch {
                _ = open.close()
                throw error
            }
            let (entries, others) = open.close()
            if entries == base.entries {
                return result
            }
            switch try await commit(entries, ifUnchangedSince: base) {
            case .committed(let contents):
                // Other objects over the path whose writes joined know their commit at once.
                for other in others where other !== self {
                    other.replaceEntries(with: contents)
                }
                return result
            case .changed(let current):
                base = current
            }
        }
    }

    /// The entries a transaction starts from: from memory when known, else read without a lock.
    private func startingContents() async throws -> Contents {
        if let known = state.withLock({ state in state.entries.map { Contents(data: state.data, entries: $0) } }) {
            return known
        }
        return try await readContentsConcurrently()
    }

    private enum CommitOutcome {
        /// The entries were written (or were already on disk) and are now known.
        case committed(Contents)
        /// The file changed since the transaction read it: these are its contents now.
        case changed(Contents)
    }

    /// Writes `entries` under the file's locks if the file still holds `base`'s bytes.
    private func commit(
        _ entries: [String: PropertyListNode],
        ifUnchangedSince base: Contents
    ) async throws -> CommitOutcome {
        do {
            return try await ChangeOrigin.$writer.withValue(writer) {
                try await file.exclusively { _ in
                    let data = try await file.readConcurrently()
                    guard data == base.data else {
                        return .changed(try await parseConcurrently(data))
                    }
                    let written = try await storeConcurrently(entries)
                    let contents = Contents(data: written, entries: entries)
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

    /// Encodes and writes the entries, off the caller's executor.
    @concurrent private func storeConcurrently(_ entries: [String: PropertyListNode]) async throws -> Data {
        let data: Data
        do {
            data = try PropertyListSerialization.data(
                fromPropertyList: entries.mapValues(\.object), format: .binary, options: 0)
        } catch {
            throw ValueStoreError(
                .encodingFailed, store: label, reason: "the settings could not be written as a property list",
                underlyingError: error)
        }
        try file.write(data)
        return data
    }
}
