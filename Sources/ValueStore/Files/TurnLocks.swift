import Synchronization

/// One first-come, first-served turn per key, whose holder may run an update's body while it
/// holds it, so that a writer that waits for the turn while that body runs cannot wait forever.
///
/// ```swift
/// let body = UpdateBody()
/// try await turns.withTurn(path, store: label, heldFor: body) {
///     let read = try snapshot()
///     try await body.run { try await transform(&read) }
///     try commit(read)
/// }
/// ```
///
/// The writers of a file (``PathLocks``) and the updates of a settings key take turns here. A
/// body awaiting a writer that waits for the body's own turn would wait forever: one in the
/// body's task is refused at once, as the body holds the turn, and one in a task that inherits
/// nothing from the body (`Task.detached`, a task started from a GCD callback) cannot be told
/// from an unrelated writer. So a writer that arrives while the holder's body runs, and still
/// waits when that same run of the body has gone on for ``patience``, is refused with
/// ``ValueStoreError/Code/nestedWrite`` instead of waiting on. A writer that itself runs inside
/// another update's body does not wait for a running body at all (two bodies writing each
/// other's files would otherwise wait for each other): it goes ahead without the turn, as
/// writers did before turns spanned bodies, and the update whose turn it skipped finds the file
/// changed and runs again. Waiting is not cancellable, as ``AsyncLock``'s.
final class TurnLocks<Key: Hashable & Sendable>: Sendable {
    /// How long a writer waits for a turn held by one run of a body before it concludes the
    /// body awaits it.
    static var patience: Duration { .seconds(2) }

    private struct Waiter {
        let id: UInt64
        let body: UpdateBody?
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Entry: WaitingLine {
        /// The body the holder runs, if it runs one.
        var holder: UpdateBody?
        var waiting: [Waiter] = []
    }

    /// What a writer does on arrival.
    private enum Arrival {
        case holds
        case bypasses
        case refused
        case waits(watching: (body: UpdateBody, run: Int)?)
    }

    private let entries = Locked<[Key: Entry]>([:])
    private let ids = Atomic<UInt64>(0)

    init() {}

    /// Runs `operation` holding the turn for `key`, or, from inside another running body while
    /// the holder's body runs, without it.
    ///
    /// - Parameters:
    ///   - key: What the turn is for.
    ///   - store: The store named in a refusal.
    ///   - body: The update body the holder runs during `operation`, if any.
    ///   - operation: What runs in the turn.
    /// - Returns: What `operation` returns.
    /// - Throws: ``ValueStoreError/Code/nestedWrite`` when the turn is held by a body that runs
    ///   in this task, or by one that kept running for ``patience`` while this writer waited;
    ///   otherwise `operation`'s error.
    nonisolated(nonsending) func withTurn<Result>(
        _ key: Key,
        store: String,
        heldFor body: UpdateBody? = nil,
        _ operation: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        let id = ids.wrappingAdd(1, ordering: .relaxed).newValue
        do {
            try await waitForTurn(key, id: id, store: store, heldFor: body)
        } catch is Bypass {
            return try await operation()
        }
        defer { passTurn(key) }
        return try await operation()
    }

    /// Takes the turn for `key`, waiting for it if needed; throws ``Bypass`` when the writer goes
    /// ahead without it.
    private func waitForTurn(_ key: Key, id: UInt64, store: String, heldFor body: UpdateBody?) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let arrival = entries.withLock { entries -> Arrival in
                guard var entry = entries[key] else {
                    entries[key] = Entry(holder: body)
                    return .holds
                }
                var watching: (body: UpdateBody, run: Int)?
                if let holder = entry.holder, let run = holder.currentRun {
                    let current = UpdateBody.current
                    if current === holder { return .refused }
                    if current?.currentRun != nil { return .bypasses }
                    watching = (holder, run)
                }
                entry.waiting.append(Waiter(id: id, body: body, continuation: continuation))
                entries[key] = entry
                return .waits(watching: watching)
            }
            switch arrival {
            case .holds:
                continuation.resume()
            case .bypasses:
                continuation.resume(throwing: Bypass())
            case .refused:
                continuation.resume(throwing: Self.refusal(store: store, ownTask: true))
            case .waits(let watching?):
                Task { await self.refuse(id, of: key, ifStillRunning: watching, store: store) }
            case .waits(nil):
                break
            }
        }
    }

    /// Thrown inside ``withTurn(_:store:heldFor:_:)`` when the writer goes ahead without the turn.
    private struct Bypass: Error {}

    /// Refuses waiter `id` if, after ``patience``, it still waits and the run of the body it
    /// arrived during still runs.
    private func refuse(_ id: UInt64, of key: Key, ifStillRunning watching: (body: UpdateBody, run: Int), store: String)
        async
    {
        do {
            try await Task.sleep(for: Self.patience)
        } catch {
            // Not cancelled: nobody holds this task.
        }
        let refused = entries.withLock { entries -> Waiter? in
            guard watching.body.currentRun == watching.run, var entry = entries[key],
                let index = entry.waiting.firstIndex(where: { $0.id == id })
            else { return nil }
            let waiter = entry.waiting.remove(at: index)
            entries[key] = entry
            return waiter
        }
        refused?.continuation.resume(throwing: Self.refusal(store: store, ownTask: false))
    }

    /// Ends the turn in flight: the longest waiter gets it, or the key goes idle.
    private func passTurn(_ key: Key) {
        let next = entries.withLock { entries -> Waiter? in
            let next = entries.takeNextInLine(for: key)
            if let next {
                entries[key]?.holder = next.body
            }
            return next
        }
        next?.continuation.resume()
    }

    private static func refusal(store: String, ownTask: Bool) -> ValueStoreError {
        ValueStoreError(
            .nestedWrite, store: store,
            reason: ownTask
                ? "it was written from inside an update of the same file or key, which holds its turn until it"
                    + " commits; nothing was written. Change the update's value instead"
                : "it waited for an update of the same file or key whose body ran on for"
                    + " \(patience) without returning, as a body that awaits this write would, from a task it"
                    + " started (Task.detached, a GCD callback); nothing was written. Write from the body"
                    + " itself, or after the update returns")
    }
}

/// The body of one update, which runs (and may run again) while its update holds a turn of
/// ``TurnLocks``; the current task's innermost running one is ``current``.
///
/// ```swift
/// let body = UpdateBody()
/// try await body.run { try await transform(&value) }
/// ```
final class UpdateBody: Sendable {
    /// The update body this task runs, inherited by the tasks it starts with `Task {}`.
    @TaskLocal static var current: UpdateBody?

    /// The number of the run in progress, odd while one runs (runs are numbered 1, 3, 5…).
    private let runs = Atomic<Int>(0)

    init() {}

    /// The run in progress, `nil` between runs.
    var currentRun: Int? {
        let runs = runs.load(ordering: .acquiring)
        return runs % 2 == 1 ? runs : nil
    }

    /// Runs the body once, as the current task's running update body.
    nonisolated(nonsending) func run<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        runs.add(1, ordering: .releasing)
        defer { runs.add(1, ordering: .releasing) }
        return try await Self.$current.withValue(self) { try await body() }
    }
}
