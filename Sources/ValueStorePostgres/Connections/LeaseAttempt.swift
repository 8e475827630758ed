#if PostgreSQL
import PostgresNIO
import Synchronization

/// One bounded wait for a connection: the lease and a timer race, and exactly one of them
/// finishes the caller's continuation.
final class LeaseAttempt<Result: Sendable>: Sendable {
    private enum Phase {
        /// Waiting for a connection.
        case waiting
        /// A connection arrived in time: the operation runs, and its outcome is the answer.
        case leased
        /// The timer or the caller's cancellation came first: nothing runs any more.
        case over
    }

    private struct State {
        var phase = Phase.waiting
        var continuation: CheckedContinuation<Result, any Error>?
        var work: Task<Void, Never>?
        /// Waits ``PostgresValueTable/connectTimeout`` for a connection.
        var timer: Task<Void, Never>?
        /// Waits ``PostgresValueTable/operationTimeout`` once the connection came.
        var deadline: Scheduled<Void>?
        var cancelled = false
        /// The connection the operation runs on.
        var connection: PostgresConnection?
        /// Cancels the statement on the server; set once the connection's backend is known.
        var interrupt: (@Sendable () async -> Void)?
        /// Whether the operation ran past its deadline.
        var overdue = false
        /// Whether the caller stopped waiting while the operation ran, so the statement is to be
        /// stopped as soon as it can be.
        var interrupting = false
        var done = false
    }

    private let state = Mutex(State())
    private let cancelsOperation: Bool
    private let settled: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - cancelsOperation: Whether the caller's cancellation cancels a running operation (a
    ///     read), or leaves it to finish on the server (a write, which may commit).
    ///   - settled: Called when an operation finishes after its caller stopped waiting.
    init(cancelsOperation: Bool, settled: (@Sendable () -> Void)?) {
        self.cancelsOperation = cancelsOperation
        self.settled = settled
    }

    /// Starts the lease and the timer; the first to finish resumes `continuation`.
    func start(
        continuation: CheckedContinuation<Result, any Error>,
        lease: @escaping @Sendable () async throws -> Result,
        timer: @escaping @Sendable () async throws -> Void
    ) {
        // The continuation first: the lease may finish before the tasks' handles are stored.
        state.withLock { $0.continuation = continuation }
        let work = Task {
            do {
                self.finish(.success(try await lease()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let clock = Task {
            do {
                try await timer()
            } catch {
                return  // cancelled: the lease finished first
            }
            self.expire()
        }
        let (cancelled, leased) = state.withLock { state in
            state.work = work
            state.timer = clock
            return (state.cancelled, state.phase != .waiting)
        }
        if leased {
            clock.cancel()  // the connection came before the clock was stored
        }
        if cancelled {
            cancel()
        }
    }

    /// Called with the connection: whether the operation may still run. From now on the
    /// operation has `deadline` to end.
    func leased(_ connection: PostgresConnection, deadline: Duration) -> Bool {
        let connectTimer: Task<Void, Never>?? = state.withLock { state in
            guard state.phase == .waiting else { return nil }
            state.phase = .leased
            state.connection = connection
            return .some(state.timer)
        }
        guard let connectTimer else { return false }
        connectTimer?.cancel()
        // A timer of the connection's event loop, which cancelling removes, rather than a task
        // that sleeps: a cancelled sleep keeps its timer, and the memory it holds, until the
        // deadline it no longer waits for, so every operation held some for operationTimeout.
        let overdue = connection.eventLoop.scheduleTask(in: TimeAmount(deadline)) { self.overdue() }
        let finished = state.withLock { state in
            state.deadline = overdue
            return state.done
        }
        if finished {
            overdue.cancel()
        }
        return true
    }

    /// How to cancel the statement on the server; runs at once if the caller already stopped
    /// waiting.
    var interrupt: (@Sendable () async -> Void)? {
        get { state.withLock { $0.interrupt } }
        set {
            let now = state.withLock { state in
                state.interrupt = newValue
                return state.interrupting && !state.done
            }
            if now, let newValue {
                Task { await newValue() }
            }
        }
    }

    /// Whether the operation ran past its deadline.
    var wasOverdue: Bool {
        state.withLock { $0.overdue }
    }

    /// Stops the statement: cancels it on the server if its backend is known, and closes its
    /// connection if it has not ended a second later (the connection may be dead, and the
    /// cancel never reach it).
    private func stopStatement() async {
        let (interrupt, done) = state.withLock { ($0.interrupt, $0.done) }
        guard !done else { return }
        await interrupt?()
        try? await Task.sleep(for: .seconds(1))
        let connection = state.withLock { $0.done ? nil : $0.connection }
        try? await connection?.close()
    }

    /// Whether a connection arrived in time.
    var wasLeased: Bool {
        state.withLock { $0.phase == .leased }
    }

    private func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, timer, deadline, abandoned) = state.withLock { state in
            defer { state.continuation = nil }
            state.done = true
            return (
                state.continuation, state.timer, state.deadline, state.continuation == nil && state.phase == .leased
            )
        }
        timer?.cancel()
        deadline?.cancel()
        continuation?.resume(with: result)
        if abandoned {
            settled?()
        }
    }

    private func expire() {
        let expired: (CheckedContinuation<Result, any Error>?, Task<Void, Never>?)? = state.withLock { state in
            guard state.phase == .waiting else { return nil }
            state.phase = .over
            defer { state.continuation = nil }
            return (state.continuation, state.work)
        }
        guard let (continuation, work) = expired else { return }
        work?.cancel()
        continuation?.resume(throwing: LeaseTimeout())
    }

    /// The operation ran past its deadline: the caller hears at once, and the statement is
    /// stopped.
    ///
    /// A read's caller hears how the stopped statement ended (so a dead connection, closed
    /// here, can be told from a statement the server cancelled), or `LeaseOverdue` if it does
    /// not end a second after its connection was closed.
    private func overdue() {
        let overdue: CheckedContinuation<Result, any Error>? = state.withLock { state in
            guard state.phase == .leased, let continuation = state.continuation else { return nil }
            state.interrupting = true
            state.overdue = true
            if cancelsOperation {
                return nil
            }
            state.continuation = nil
            return continuation
        }
        overdue?.resume(throwing: LeaseOverdue())
        guard state.withLock({ $0.overdue }) else { return }
        Task {
            await self.stopStatement()
            guard self.cancelsOperation else { return }
            try? await Task.sleep(for: .seconds(1))
            let continuation = self.state.withLock { state in
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(throwing: LeaseOverdue())
        }
    }

    /// The caller was cancelled: it hears at once (`CancellationError` while waiting,
    /// `LeaseCancelled` once a connection runs the operation), and the operation is cancelled.
    func cancel() {
        let (work, timer, continuation, phase, interrupt) = state.withLock { state in
            state.cancelled = true
            let phase = state.phase
            if phase == .waiting {
                state.phase = .over
            }
            let interrupting = phase == .leased && state.continuation != nil && !state.done
            if interrupting {
                state.interrupting = true
            }
            defer { state.continuation = nil }
            return (state.work, state.timer, state.continuation, phase, interrupting)
        }
        switch phase {
        case .waiting, .over: continuation?.resume(throwing: CancellationError())
        case .leased: continuation?.resume(throwing: LeaseCancelled())
        }
        if phase != .leased || cancelsOperation {
            work?.cancel()
        }
        timer?.cancel()
        if interrupt {
            Task { await self.stopStatement() }
        }
    }
}

/// The caller was cancelled while its operation ran on a connection.
struct LeaseCancelled: Error {}

/// The operation ran past ``PostgresValueTable/operationTimeout``.
struct LeaseOverdue: Error {}

/// A failure before the operation sent anything.
struct NotSent: Error {
    var underlying: any Error
}

/// A connection lent after a proof of death did not answer its first round trip, and was closed.
struct SilentConnection: Error {}

/// No connection came within ``PostgresValueTable/connectTimeout``.
struct LeaseTimeout: Error {}
#endif
