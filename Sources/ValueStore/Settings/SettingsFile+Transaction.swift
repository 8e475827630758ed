import Foundation
import Synchronization

extension SettingsFile {
    /// The transaction this task has open on a settings file, if any.
    @TaskLocal static var openTransaction: OpenTransaction?

    /// A transaction in progress: the entries it will commit, which writes from inside it to the
    /// same file (through any ``SettingsFile`` over its path) change too, until it closes.
    ///
    /// Tasks started inside an update inherit the task-local, but only the task that opened the
    /// transaction joins it. A write from another task while the body runs would be lost when
    /// the transaction runs again (it starts over from the file) or its body throws, after that
    /// write returned; so it throws ``ValueStoreError/Code/nestedWrite`` instead. Once the
    /// transaction closed, such a write commits on its own.
    final class OpenTransaction: Sendable {
        /// The file's path: writes through another object over the same file join too, rather
        /// than commit on their own and make the transaction run again.
        let path: String
        private let state: Locked<State>

        private struct State {
            var entries: Entries
            var isOpen = true
            /// The task that opened the transaction and runs its body: compared, never used,
            /// and only while the transaction is open, so while that task runs.
            let owner: UnsafeCurrentTask?
            /// The objects whose writes joined, which learn the entries once committed.
            var participants: [SettingsFile] = []
        }

        /// A transaction opened by the current task.
        init(path: String, entries: Entries, ownedByCurrentTask: Void) {
            self.path = path
            let owner = withUnsafeCurrentTask { $0 }
            state = Locked(State(entries: entries, owner: owner))
        }

        /// Applies `changes` if the transaction is still open; `false` when it closed.
        ///
        /// - Throws: ``ValueStoreError/Code/nestedWrite`` when it is open and this is not the
        ///   task that opened it; nothing was applied.
        func join(_ changes: [Change], from file: SettingsFile, store: String) throws -> Bool {
            try state.withLock { state in
                guard state.isOpen else { return false }
                try Self.refuseAnotherTask(than: state.owner, store: store)
                for change in changes {
                    state.entries[change.key] = change.node
                }
                state.participants.append(file)
                return true
            }
        }

        /// Ends the transaction and returns the entries to commit and the objects that joined;
        /// later writes do not join.
        func close() -> (entries: Entries, participants: [SettingsFile]) {
            state.withLock { state in
                state.isOpen = false
                return (state.entries, state.participants)
            }
        }

        /// Runs `body` on a copy of the entries and, if it returns while the transaction is still
        /// open, applies the keys it changed; `nil` when the transaction closed first, and then
        /// nothing was applied.
        ///
        /// - Throws: ``ValueStoreError/Code/nestedWrite`` when it is open and this is not the
        ///   task that opened it; `body` did not run.
        func run<Result>(
            _ body: (_ entries: inout Entries) async throws -> Result,
            from file: SettingsFile? = nil,
            store: String = ""
        ) async throws -> Result? {
            let before = try state.withLock { state -> Entries? in
                guard state.isOpen else { return nil }
                try Self.refuseAnotherTask(than: state.owner, store: store)
                return state.entries
            }
            guard let before else { return nil }
            var after = before
            let result = try await body(&after)
            let applied = state.withLock { [after] state in
                guard state.isOpen else { return false }
                for (key, node) in after where before[key] != node {
                    state.entries[key] = node
                }
                for key in before.keys where after[key] == nil {
                    state.entries[key] = nil
                }
                if let file {
                    state.participants.append(file)
                }
                return true
            }
            return applied ? result : nil
        }

        /// Throws ``ValueStoreError/Code/nestedWrite`` unless the current task is `owner`.
        private static func refuseAnotherTask(than owner: UnsafeCurrentTask?, store: String) throws {
            guard withUnsafeCurrentTask(body: { $0 == owner }) else {
                throw ValueStoreError(
                    .nestedWrite, store: store,
                    reason:
                        "the settings file was written from a task started inside an update of the same file while"
                        + " its body ran; the update may run again or fail, which would lose the write, so nothing"
                        + " was written. Write from the body itself, or after the update returns")
            }
        }

        /// ``run(_:from:store:)`` by the task that opened the transaction, which closes it only
        /// afterwards.
        func runAsOwner<Result>(
            _ body: (_ entries: inout Entries) async throws -> Result
        ) async throws -> Result {
            guard let result = try await run(body) else {
                preconditionFailure("a transaction closed while its owner's body ran")
            }
            return result
        }
    }
}
