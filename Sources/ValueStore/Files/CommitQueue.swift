import Foundation

/// This process's commits to each file, one at a time and in arrival order, where saves and
/// removes that arrive while a commit is in flight share the next one (group commit, no timer).
///
/// ```swift
/// try await CommitQueue.shared.write(data, key: file.commitKey) { contents in
///     try await file.commit(contents)
/// }
/// ```
///
/// - At most one commit per key is in flight. A save or remove that arrives meanwhile joins the
///   last waiting group of writes if there is one, replacing its contents (the last arrival wins),
///   or starts one; an update's commit (``exclusive(_:_:)``) waits as a turn of its own, so a save
///   that arrives during it goes into the group after it.
/// - The first waiter of a group commits the group's contents once its turn comes; every waiter
///   of the group returns when that durable write did, or throws its error. Nothing is
///   acknowledged before the write that holds its value, or a later one, is durable.
/// - A lone writer commits at once: no delay, but one `Task.yield()` before it writes, so that
///   writes ready to run on a busy or narrow pool arrive and join its commit.
final class CommitQueue: Sendable {
    /// The queue every file store of this process shares.
    static let shared = CommitQueue()

    /// What a waiter is told when its turn comes.
    enum Turn: Sendable {
        /// Its group was committed by another waiter.
        case committed
        /// It commits `contents` for its group, as `writer`, then settles `waiters`.
        case lead(contents: Data?, writer: UInt64?, waiters: [CheckedContinuation<Turn, any Error>])
    }

    /// One waiting turn.
    private enum Waiting {
        /// Saves and removes sharing one commit: the last arrival's contents and writer (see
        /// ``ChangeOrigin``), every arrival's continuation (the first leads).
        case writes(contents: Data?, writer: UInt64?, waiters: [CheckedContinuation<Turn, any Error>])
        /// An update's commit.
        case exclusive(CheckedContinuation<Void, Never>)
    }

    private struct Queue {
        var waiting: [Waiting] = []
    }

    /// The queues of the keys with a commit in flight; a key without one has no entry.
    private let queues = Locked<[String: Queue]>([:])

    /// Stores `contents` (`nil` removes) through `commit`, sharing the commit with the writes
    /// that arrive while another commit to `key` is in flight.
    ///
    /// - Throws: The error of the commit that held this write's value, whoever ran it.
    nonisolated(nonsending) func write(
        _ contents: Data?,
        key: String,
        commit: (_ contents: Data?) async throws -> Void
    ) async throws {
        // The commit signals as the writer of the value it writes: a cache whose save a later
        // arrival replaced must hear the change, and the later arrival's own cache must not.
        let writer = ChangeOrigin.writer
        let turn = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Turn, any Error>) in
            let leadsNow = queues.withLock { queues -> Bool in
                guard var queue = queues[key] else {
                    queues[key] = Queue()
                    return true
                }
                if case .writes(_, _, var waiters) = queue.waiting.last {
                    waiters.append(continuation)
                    queue.waiting[queue.waiting.count - 1] = .writes(
                        contents: contents, writer: writer, waiters: waiters)
                } else {
                    queue.waiting.append(.writes(contents: contents, writer: writer, waiters: [continuation]))
                }
                queues[key] = queue
                return false
            }
            if leadsNow {
                continuation.resume(returning: .lead(contents: contents, writer: writer, waiters: []))
            }
        }
        guard case .lead(var groupContents, var groupWriter, var waiters) = turn else { return }
        // Let the writes that are ready to run arrive first: on a busy or narrow pool they would
        // otherwise wait for this commit and pay one of their own. Nothing is written yet, so a
        // group that arrived meanwhile joins this commit, the last arrival's contents winning.
        await Task.yield()
        if let joining = takeWaitingGroup(key) {
            (groupContents, groupWriter) = (joining.contents, joining.writer)
            waiters += joining.waiters
        }
        let result: Result<Void, any Error>
        do {
            try await ChangeOrigin.$writer.withValue(groupWriter) { try await commit(groupContents) }
            result = .success(())
        } catch {
            result = .failure(error)
        }
        for waiter in waiters {
            switch result {
            case .success: waiter.resume(returning: .committed)
            case .failure(let error): waiter.resume(throwing: error)
            }
        }
        passTurn(key)
        try result.get()
    }

    /// Runs `body` as a turn of its own: after the commit in flight and every turn that arrived
    /// before, and before any that arrive during it. An update's commit goes through it.
    nonisolated(nonsending) func exclusive<Result>(
        _ key: String,
        _ body: () async throws -> Result
    ) async throws -> Result {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let runsNow = queues.withLock { queues -> Bool in
                guard var queue = queues[key] else {
                    queues[key] = Queue()
                    return true
                }
                queue.waiting.append(.exclusive(continuation))
                queues[key] = queue
                return false
            }
            if runsNow {
                continuation.resume()
            }
        }
        defer { passTurn(key) }
        return try await body()
    }

    /// Removes the group of writes waiting first for `key`, unless an update's turn is first.
    private func takeWaitingGroup(
        _ key: String
    ) -> (contents: Data?, writer: UInt64?, waiters: [CheckedContinuation<Turn, any Error>])? {
        queues.withLock { queues in
            guard var queue = queues[key], case .writes(let contents, let writer, let waiters) = queue.waiting.first
            else { return nil }
            queue.waiting.removeFirst()
            queues[key] = queue
            return (contents, writer, waiters)
        }
    }

    /// Ends the turn in flight: the next waiting turn starts, or the key goes idle.
    private func passTurn(_ key: String) {
        let next = queues.withLock { queues -> Waiting? in
            guard var queue = queues[key], !queue.waiting.isEmpty else {
                queues[key] = nil
                return nil
            }
            let next = queue.waiting.removeFirst()
            queues[key] = queue
            return next
        }
        switch next {
        case nil:
            break
        case .writes(let contents, let writer, let waiters):
            waiters[0].resume(
                returning: .lead(contents: contents, writer: writer, waiters: Array(waiters.dropFirst())))
        case .exclusive(let continuation):
            continuation.resume()
        }
    }

    /// How many saves and removes wait for a commit to `key`: for tests that need arrivals in a
    /// known order.
    func waitingWrites(for key: String) -> Int {
        queues.withLock { queues in
            queues[key]?.waiting.reduce(0) { count, turn in
                guard case .writes(_, _, let waiters) = turn else { return count }
                return count + waiters.count
            } ?? 0
        }
    }
}
