import Foundation
import Synchronization

extension SettingsFile {
    /// The transaction this task has open on a settings file, if any.
    @TaskLocal static var openTransaction: OpenTransaction?

    /// A transaction in progress: the entries it will commit, which writes from inside it to the
    /// same file (through any ``SettingsFile`` over its path) change too, until it closes.
    ///
    /// Tasks started inside an update inherit the task-local, and may outlive the transaction:
    /// a write that arrives after it closed must not join it, or it would be lost.
    final class OpenTransaction: Sendable {
        /// The file's path: writes through another object over the same file join too, rather
        /// than commit on their own and make the transaction run again.
        let path: String
        private let state: Locked<State>

        private struct State {
            var entries: [String: PropertyListNode]
            var isOpen = true
            /// The objects whose writes joined, which learn the entries once committed.
            var participants: [SettingsFile] = []
        }

        init(path: String, entries: [String: PropertyListNode]) {
            self.path = path
            state = Locked(State(entries: entries))
        }

        /// Applies `changes` if the transaction is still open; `false` when it closed.
        func join(_ changes: [(key: String, node: PropertyListNode?)], from file: SettingsFile) -> Bool {
            state.withLock { state in
                guard state.isOpen else { return false }
                for change in changes {
                    state.entries[change.key] = change.node
                }
                state.participants.append(file)
                return true
            }
        }

        /// Ends the transaction and returns the entries to commit and the objects that joined;
        /// later writes do not join.
        func close() -> (entries: [String: PropertyListNode], participants: [SettingsFile]) {
            state.withLock { state in
                state.isOpen = false
                return (state.entries, state.participants)
            }
        }

        /// Runs `body` on a copy of the entries and, if it returns while the transaction is still
        /// open, applies the keys it changed; `nil` when the transaction closed first, and then
        /// nothing was applied.
        func run<Result>(
            _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result,
            from file: SettingsFile? = nil
        ) async throws -> Result? {
            guard let before = state.withLock({ $0.isOpen ? $0.entries : nil }) else { return nil }
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

        /// ``run(_:from:)`` by the task that opened the transaction, which closes it only
        /// afterwards.
        func runAsOwner<Result>(
            _ body: (_ entries: inout [String: PropertyListNode]) async throws -> Result
        ) async throws -> Result {
            guard let result = try await run(body) else {
                preconditionFailure("a transaction closed while its owner's body ran")
            }
            return result
        }
    }
}
