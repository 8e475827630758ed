import Foundation
import ValueStore

extension SyncReplica {
    /// Takes in what other processes sharing the folder (an app and its extensions) committed
    /// since this one last read it: their entries in the journal, or, after one of them folded
    /// it, the settings file and the journal read again. Runs holding the folder's lock, before
    /// this process stamps, decides or folds anything.
    func catchUp() async throws {
        let changes: ReplicaFiles.Changes
        switch try await BlockingIO.run({ try await files.journal.catchUp() }) {
        case .none:
            return
        case .appended(let appended):
            changes = appended
        case .folded(let journaled):
            let loaded: ReplicaFiles.Loaded
            do {
                loaded = try await BlockingIO.run { try await files.reload(applying: journaled) }
            } catch {
                // The settings file is read again next time, though the journal may not change.
                files.journal.readAgain()
                throw error
            }
            var records = loaded.records.mapValues { Optional($0) }
            for key in withState({ Array($0.records.keys) }) where loaded.records[key] == nil {
                records[key] = .some(nil)
            }
            changes = ReplicaFiles.Changes(
                meta: loaded.meta, records: records, archive: loaded.archive, rejected: loaded.rejected)
        }
        let signalled = withState { state in
            let signalled = state.changedValues(changes.records)
            // The clock only goes forward: after every stamp either process made.
            var clock = state.clock
            if let meta = changes.meta {
                clock.last = max(clock.last, meta.clock.last)
                clock.seen = max(clock.seen, meta.clock.seen)
                clock.offset = meta.clock.offset
                clock.era = max(clock.era ?? 0, meta.clock.era ?? 0)
                state.meta = meta
            }
            for record in changes.records.values.compactMap({ $0 }) {
                clock.last = max(clock.last, record.stamp.reading)
            }
            state.clock = clock
            state.meta?.clock = clock
            if let archive = changes.archive {
                let known = Set(state.archive)
                state.publish(conflicts: archive.filter { !known.contains($0) })
                state.archive = archive
            }
            if let rejected = changes.rejected {
                state.rejected = rejected
            }
            state.settle(changes.records)
            state.publish()
            return signalled
        }
        signal(signalled)
    }

    /// Takes in what other processes committed, when the journal says there may be some: before
    /// a read, and before a sync round, so that both processes show every change either made.
    func catchUpIfNeeded() async throws {
        // A read inside a write (or a task it started) sees what the write caught up on.
        guard files.journal.mayHaveNews, Self.writing[ObjectIdentifier(self)]?.hold.isHeld != true else { return }
        try await locked(catchingUp: true) {}
    }
}
