#if PostgreSQL
import Synchronization
import ValueStore

/// Updates of one key through one client take turns in this process, so tasks of the same
/// process never make each other's optimistic write fail and run their bodies again.
///
/// Across processes and machines, `update` stays optimistic: nothing is locked on the server
/// while a body runs. Within a process, eight tasks updating one key would otherwise all read the
/// same version, and all but one would fail to write and start over, round after round; taking
/// turns makes each of them read once and write once. A turn is process memory only: a process
/// that dies holds nothing. A write to the same key from inside the body (the task that runs it,
/// or a task it started while the body runs) throws ``/ValueStore/ValueStoreError/Code/nestedWrite`` instead
/// of waiting for a turn that never comes, or making the update start over after every write.
final class PostgresUpdateTurns: Sendable {
    static let shared = PostgresUpdateTurns()

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        /// The keys whose turn is taken, each with the tasks waiting for it, first come first.
        var queues: [String: [Waiter]] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Runs `body` once every earlier update of `key` in this process is done, as the open update
    /// of `key`.
    nonisolated(nonsending) func taking<Result>(
        _ key: String,
        store: String,
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        try OpenPostgresUpdate.refuseWrite(to: key, store: store)
        try await wait(for: key)
        defer { pass(key) }
        let update = OpenPostgresUpdate(key: key, enclosing: OpenPostgresUpdate.current)
        defer { update.isRunning.store(false, ordering: .releasing) }
        return try await OpenPostgresUpdate.$current.withValue(update) { try await body() }
    }

    private func wait(for key: String) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case turn, queued, cancelled }
                let outcome: Outcome = state.withLock { state in
                    if state.queues[key] == nil {
                        state.queues[key] = []
                        return .turn
                    }
                    // Checked under the lock, so a cancellation either finds this waiter queued
                    // or is seen here.
                    if Task.isCancelled { return .cancelled }
                    state.queues[key]!.append(Waiter(id: id, continuation: continuation))
                    return .queued
                }
                switch outcome {
                case .turn: continuation.resume()
                case .queued: break
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.queues[key]?.firstIndex(where: { $0.id == id }) else { return nil }
                return state.queues[key]!.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Gives the turn of `key` to the first task waiting for it, if any.
    private func pass(_ key: String) {
        let next: Waiter? = state.withLock { state in
            guard let queue = state.queues[key], !queue.isEmpty else {
                state.queues[key] = nil
                return nil
            }
            return state.queues[key]!.removeFirst()
        }
        next?.continuation.resume()
    }
}

/// An update whose body is running in this task: a write to its key from inside the body is
/// refused. Tasks started inside the body inherit it; once the body returns it no longer
/// applies, and their writes go through on their own.
final class OpenPostgresUpdate: Sendable {
    /// The innermost update whose body this task runs.
    @TaskLocal static var current: OpenPostgresUpdate?

    let key: String
    let enclosing: OpenPostgresUpdate?
    let isRunning = Atomic<Bool>(true)

    init(key: String, enclosing: OpenPostgresUpdate?) {
        self.key = key
        self.enclosing = enclosing
    }

    /// Throws ``/ValueStore/ValueStoreError/Code/nestedWrite`` when an update of `key` is running its body in
    /// this task or in the task that started it.
    static func refuseWrite(to key: String, store: String) throws {
        var update = current
        while let open = update {
            if open.key == key && open.isRunning.load(ordering: .acquiring) {
                throw ValueStoreError(
                    .nestedWrite, store: store,
                    reason:
                        "the key was written from inside an update of the same key, which would start over"
                        + " after every such write; nothing was written. Change the update's value instead")
            }
            update = open.enclosing
        }
    }
}
#endif
