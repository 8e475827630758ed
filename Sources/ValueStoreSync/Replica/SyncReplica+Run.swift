import Foundation
import Synchronization
import ValueStore

extension SyncReplica {
    /// Syncs until cancelled: pushes when something is pending, pulls on every poke of the
    /// remote but the echoes of its own pushes, and on a slow timer while the remote's pokes are
    /// not alive.
    ///
    /// ```swift
    /// let syncing = Task { try await replica.run() }
    /// // …
    /// syncing.cancel()
    /// ```
    ///
    /// It subscribes to the remote's pokes, then syncs once: a change another device pushes after
    /// that first pull is poked, never missed. A poke that names this replica as its author
    /// (``SyncPoke``), the echo of its own push, asks for no pull once the push's answer brought
    /// the replica's cursor up to the poke's head: nothing else changed. After a failure it waits, twice as long after each failure in
    /// a row (``SyncOptions/retryDelay`` up to ``SyncOptions/maximumRetryDelay``), and tries
    /// again; nothing pending is ever dropped, and ``SyncStatus/lastError`` shows the failure.
    /// While nothing is pending and the pokes stream is alive, it makes no request at all.
    ///
    /// - Throws: The settings file's error when the replica cannot open its folder; otherwise it
    ///   returns when its task is cancelled.
    public func run() async throws {
        try await open()
        // Subscribed before the first sync rings: a change pushed after its pull is poked.
        let pokes = remote.authoredPokes()
        let (doorbell, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Each run has a doorbell of its own: another run of the replica, started and ended
        // meanwhile (two windows' tasks), leaves this one hearing every ring.
        let run = withState { state in
            state.runs += 1
            state.doorbells[state.runs] = continuation
            state.alivePokes.insert(state.runs)
            state.ring(push: true, pull: true)
            return state.runs
        }
        defer {
            withState { state in
                state.doorbells[run] = nil
                state.alivePokes.remove(run)
            }
            continuation.finish()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await poke in pokes {
                    self.withState { $0.ring(for: poke) }
                }
                self.withState { state in
                    state.alivePokes.remove(run)
                    state.ring(pull: true)
                }
            }
            group.addTask {
                while (try? await Task.sleep(for: self.options.pollInterval)) != nil {
                    self.withState { state in
                        if !state.pokesAlive {
                            state.ring(pull: true)
                        }
                    }
                }
            }
            var failures = 0
            for await _ in doorbell {
                // Taken when the sync starts: the echo of a push this loop made is settled by now.
                let wants = withState { state in
                    defer { state.wants = ReplicaState.Wants() }
                    var wants = state.wants
                    wants.pull = wants.pulls(at: state.meta?.cursor ?? .zero)
                    return wants
                }
                guard wants.push || wants.pull else { continue }
                do {
                    try await rounds.withLock {
                        try await recordingErrors {
                            try await syncRound(pulling: wants.pull)
                        }
                    }
                    failures = 0
                } catch is Unmerged {
                    failures = 0  // shown in the status; the key waits for a change
                } catch {
                    var waited = false
                    if !Task.isCancelled {
                        failures += 1
                        enter(.backingOff)
                        waited = (try? await Task.sleep(for: retryDelay(after: failures))) != nil
                        enter(.idle)
                    }
                    // Tried again now, or, as this run ends, by another run of the replica if one
                    // runs: what this one took is not dropped with it.
                    withState { $0.ring(push: wants.push, pull: wants.pull) }
                    if !waited { break }
                }
            }
            group.cancelAll()
        }
    }

    /// Runs `body`, then shows its error, or none, in the status.
    func recordingErrors(_ body: () async throws -> Void) async throws {
        do {
            try await body()
            withState { state in
                state.lastError = nil
                state.phase = .idle
                state.publish()
            }
        } catch {
            withState { state in
                state.lastError = (error as? Unmerged)?.error ?? error
                state.phase = .idle
                state.publish()
            }
            throw error
        }
    }

    /// A round that synced everything but a `.merge` change whose merge failed (a value it
    /// cannot decode): `run()` shows the error and goes on without backing off, since waiting
    /// does not change the value, and the other keys keep syncing at once.
    struct Unmerged: Error {
        var error: any Error
    }

    /// The wait after `failures` failures in a row.
    private func retryDelay(after failures: Int) -> Duration {
        var delay = options.retryDelay
        for _ in 1..<max(1, failures) where delay < options.maximumRetryDelay {
            delay *= 2
        }
        return min(delay, options.maximumRetryDelay)
    }

    /// Waits until every change made before the call has been pushed and settled by a running
    /// ``run()`` or a ``syncNow()``: acknowledged, or archived as a loser.
    ///
    /// ```swift
    /// try await theme.save(.dark)
    /// try await replica.waitUntilPushed()   // the server has it, or has archived it
    /// ```
    ///
    /// It sends nothing itself. A key changed again meanwhile is waited for until a change of it
    /// is acknowledged. A change rejected before the call, which no wait has reported yet, is
    /// reported by this one: a wait that starts after ``run()`` was quicker still hears of it.
    ///
    /// - Throws: ``ValueStore/ValueStoreError/Code/rejected`` when the server refused one of
    ///   those changes for good (see ``SyncStatus/rejectedChanges``); `CancellationError` when
    ///   the task is cancelled first.
    public func waitUntilPushed() async throws {
        try await open()
        // The first status comes at once; every change of the pending marks publishes another.
        let updates = statusUpdates()
        let (mark, firstRejection) = withState { ($0.writes, $0.reportedRejections) }
        for await _ in updates {
            let (done, rejected) = withState { state in
                let rejected = state.rejections.dropFirst(firstRejection).contains { $0 <= mark }
                if rejected {
                    state.reportedRejections = max(state.reportedRejections, state.rejections.count)
                }
                return (state.pendingSince.values.allSatisfy { $0 > mark }, rejected)
            }
            if rejected {
                throw ValueStoreError(
                    .rejected, store: label,
                    reason: "the server refused a change made before the wait; see the status's rejected changes")
            }
            if done {
                return
            }
        }
        throw CancellationError()
    }
}
