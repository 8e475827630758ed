import Foundation

/// This process's commits to each file, one at a time and in arrival order, where saves and
/// removes that arrive while a commit is in flight share the next one (group commit, no timer).
///
/// ```swift
/// try await CommitQueue.shared.write({ data }, key: file.commitKey) { contents in
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
/// - A lone writer commits at once: no delay, but its hand-off to the I/O threads before it
///   writes, during which writes ready to run on a busy or narrow pool arrive and join its commit.
/// - Only a group's leader runs on the I/O threads (see ``BlockingIO``), for the encoding and
///   the commit: a waiter joins its group on its own task and waits on no thread at all, so a
///   commit held by a slow disk holds one I/O thread, however many saves wait for it.
/// - Contents are encoded only when committed: a save hands over a closure that encodes its
///   value, and the group's leader runs the last arrival's alone, so values a later arrival
///   replaced are never encoded. One that fails to encode fails its own save only: the arrival
///   before it is committed instead.
final class CommitQueue: Sendable {
    /// A save's contents (`nil` removes), encoded only if its commit needs them.
    typealias Contents = @Sendable () throws -> Data?

    /// One save or remove of a group: its contents, its writer (see ``ChangeOrigin``) and, for
    /// all but the leader's own, the continuation it waits on.
    struct Arrival: Sendable {
        let contents: Contents
        let writer: UInt64?
        let waiter: CheckedContinuation<Turn, any Error>?
    }

    /// The queue every file store of this process shares.
    static let shared = CommitQueue()

    /// What a waiter is told when its turn comes.
    enum Turn: Sendable {
        /// Its group was committed by another waiter.
        case committed
        /// It commits for its group, the last of `arrivals` that encodes, then settles them.
        case lead(arrivals: [Arrival])
    }

    /// One waiting turn.
    private enum Waiting {
        /// Saves and removes sharing one commit, in arrival order (the first leads).
        case writes([Arrival])
        /// An update's commit.
        case exclusive(CheckedContinuation<Void, Never>)
    }

    private struct Queue: WaitingLine {
        var waiting: [Waiting] = []
    }

    /// The queues of the keys with a commit in flight; a key without one has no entry.
    private let queues = Locked<[String: Queue]>([:])

    /// Stores `contents` (`nil` removes) through `commit`, sharing the commit with the writes
    /// that arrive while another commit to `key` is in flight.
    ///
    /// - Throws: The error of the commit that held this write's value, whoever ran it.
    nonisolated(nonsending) func write(
        _ contents: @escaping Contents,
        key: String,
        commit: @Sendable (_ contents: Data?) async throws -> Void
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
                let arrival = Arrival(contents: contents, writer: writer, waiter: continuation)
                if case .writes(let arrivals) = queue.waiting.last {
                    queue.waiting[queue.waiting.count - 1] = .writes(arrivals + [arrival])
                } else {
                    queue.waiting.append(.writes([arrival]))
                }
                queues[key] = queue
                return false
            }
            if leadsNow {
                continuation.resume(returning: .lead(arrivals: []))
            }
        }
        guard case .lead(var arrivals) = turn else { return }
        if arrivals.isEmpty {
            arrivals = [Arrival(contents: contents, writer: writer, waiter: nil)]
        }
        // Only the leader goes to the I/O threads, to encode and commit (write, fsync, rename):
        // the waiters hold no thread, of the pool or the I/O threads, while they wait. Its hand-off
        // there is its yield: the writes ready to run on the thread it leaves arrive meanwhile
        // (on a busy or narrow pool they would otherwise wait for this commit and pay one of
        // their own), and as nothing is written yet, a group that arrived joins this commit, the
        // last arrival's contents winning.
        let first = arrivals
        let outcome = await BlockingIO.run {
            await Self.commitLast(of: first + (takeWaitingGroup(key) ?? []), commit)
        }
        for arrival in outcome.committed {
            guard let waiter = arrival.waiter else { continue }
            switch outcome.result {
            case .success: waiter.resume(returning: .committed)
            case .failure(let error): waiter.resume(throwing: error)
            }
        }
        passTurn(key)
        if let ownFailure = outcome.ownFailure { throw ownFailure }
        try outcome.result.get()
    }

    /// What a group's commit did: the arrivals it committed for and its result, and the
    /// leader's own encoding failure, if any.
    private struct Outcome: Sendable {
        var committed: [Arrival] = []
        var result: Result<Void, any Error> = .success(())
        var ownFailure: (any Error)?
    }

    /// Encodes the last arrival that encodes and commits it through `commit`, as that arrival's
    /// writer, off the caller's executor; fails at once the waiters whose contents failed to
    /// encode.
    @concurrent private static func commitLast(
        of arrivals: [Arrival],
        _ commit: @Sendable (_ contents: Data?) async throws -> Void
    ) async -> Outcome {
        var outcome = Outcome()
        let (committed, failed) = encodeLast(of: arrivals)
        for (arrival, error) in failed {
            if let waiter = arrival.waiter { waiter.resume(throwing: error) } else { outcome.ownFailure = error }
        }
        outcome.committed = committed.map(\.arrival)
        if let (data, writer) = committed.last.map({ ($0.encoded, $0.arrival.writer) }) {
            do {
                try await ChangeOrigin.$writer.withValue(writer) { try await commit(data) }
            } catch {
                outcome.result = .failure(error)
            }
        }
        return outcome
    }

    /// Encodes the last arrival's contents; when that fails, the one before it, and so on. Returns
    /// the arrivals that share the commit (the last of them with the contents it holds) and
    /// those whose contents failed to encode, with their errors.
    private static func encodeLast(
        of arrivals: [Arrival]
    ) -> (committed: [(arrival: Arrival, encoded: Data?)], failed: [(Arrival, any Error)]) {
        var failed: [(Arrival, any Error)] = []
        for index in arrivals.indices.reversed() {
            do {
                let encoded = try arrivals[index].contents()
                let sharing = arrivals[..<index].map { (arrival: $0, encoded: Data?.none) }
                return (sharing + [(arrivals[index], encoded)], failed)
            } catch {
                failed.append((arrivals[index], error))
            }
        }
        return ([], failed)
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
    private func takeWaitingGroup(_ key: String) -> [Arrival]? {
        queues.withLock { queues in
            guard var queue = queues[key], case .writes(let arrivals) = queue.waiting.first else { return nil }
            queue.waiting.removeFirst()
            queues[key] = queue
            return arrivals
        }
    }

    /// Ends the turn in flight: the next waiting turn starts, or the key goes idle.
    private func passTurn(_ key: String) {
        let next = queues.withLock { $0.takeNextInLine(for: key) }
        switch next {
        case nil:
            break
        case .writes(let arrivals):
            // The first arrival leads; its own turn is the arrival without a waiter.
            let first = arrivals[0]
            let leader = Arrival(contents: first.contents, writer: first.writer, waiter: nil)
            first.waiter?.resume(returning: .lead(arrivals: [leader] + arrivals.dropFirst()))
        case .exclusive(let continuation):
            continuation.resume()
        }
    }

    /// How many saves and removes wait for a commit to `key`: for tests that need arrivals in a
    /// known order.
    func waitingWrites(for key: String) -> Int {
        queues.withLock { queues in
            queues[key]?.waiting.reduce(0) { count, turn in
                guard case .writes(let arrivals) = turn else { return count }
                return count + arrivals.count
            } ?? 0
        }
    }
}
