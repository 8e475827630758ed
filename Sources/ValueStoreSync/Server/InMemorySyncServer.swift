import Foundation
import Synchronization
import ValueStore

/// The reference sync server, in memory: for tests, previews and demos, and the model the
/// PostgreSQL server follows decision for decision.
///
/// ```swift
/// let server = InMemorySyncServer()
/// let account = SyncAccount(id: "user-42")
/// let replica = try SyncReplica(
///     directory: syncFolder, account: account, remote: server.remote(for: account), options: SyncOptions())
/// ```
///
/// It keeps, per account, what every sync server keeps: the account's epoch, head and horizon;
/// each key's record; each (replica, key)'s last settled change, so a repeated push has its
/// effect once; each replica's progress; and an archive of every change that lost, until it is
/// resolved. Every push and pull runs under one lock, as one transaction. Its remote pokes
/// (``SyncRemote/authoredPokes``) after every push that wrote to the account, naming the pushing
/// replica and the head its push reached.
public final class InMemorySyncServer: Sendable {
    private let accounts = Mutex<[SyncAccount: SyncAccountState]>([:])
    /// Each account's records by version, so that a pull page costs what it returns; taken
    /// inside `accounts`' lock.
    private let indexes = Mutex<[SyncAccount: SyncVersionIndex]>([:])
    private let pokes = SyncPokeSubscribers()
    private let clock: SyncClock
    private let maximumClockAhead: Int64

    /// A server with no accounts yet.
    ///
    /// ```swift
    /// let server = InMemorySyncServer()
    /// let strict = InMemorySyncServer(maximumClockAhead: .seconds(5))
    /// ```
    ///
    /// - Parameters:
    ///   - maximumClockAhead: How far in the server's future a change's stamp may be before the
    ///     push is answered ``SyncPushResponse/Outcome/tooFarAhead``; a minute by default.
    ///   - clock: The server's clock.
    public init(maximumClockAhead: Duration = .seconds(60), clock: SyncClock = .system) {
        self.clock = clock
        let (seconds, attoseconds) = maximumClockAhead.components
        self.maximumClockAhead = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// The remote through which replicas of `account` talk to this server.
    ///
    /// ```swift
    /// let remote = server.remote(for: SyncAccount(id: "user-42"))
    /// ```
    ///
    /// - Parameter account: The account.
    /// - Returns: A remote whose requests must name `account`; its pokes signal every push that
    ///   wrote to the account, and each new epoch.
    public func remote(for account: SyncAccount) -> SyncRemote {
        SyncRemote(
            label: "in-memory sync server, account '\(account.id)'",
            push: { request in
                try Self.check(request.account, is: account)
                return self.push(request)
            },
            pull: { request in
                try Self.check(request.account, is: account)
                return self.pull(request)
            },
            authoredPokes: { self.pokes.pokes(of: account) }
        )
    }

    /// The changes of `account` that lost and are archived, oldest first.
    ///
    /// ```swift
    /// let lost = try await server.archivedConflicts(for: account)
    /// ```
    ///
    /// - Parameter account: The account.
    /// - Returns: The archived losers, until resolved.
    /// - Throws: Nothing, in memory; a server with storage throws its failures.
    public func archivedConflicts(for account: SyncAccount) async throws -> [SyncConflict] {
        accounts.withLock { $0[account]?.archive.map(\.conflict) ?? [] }
    }

    /// Removes a loser from the server's archive of `account`.
    ///
    /// ```swift
    /// for conflict in try await server.archivedConflicts(for: account) {
    ///     try await server.resolve(conflict, for: account)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - conflict: An entry of ``archivedConflicts(for:)``.
    ///   - account: The account.
    /// - Throws: Nothing, in memory; a server with storage throws its failures.
    public func resolve(_ conflict: SyncConflict, for account: SyncAccount) async throws {
        accounts.withLock { accounts in
            accounts[account]?.archive.removeAll { $0.conflict == conflict }
        }
    }

    /// Starts a new epoch for `account`: a deliberate reset, after which every replica takes the
    /// server's records as they are, archives its own differences (pending changes included) and
    /// pushes nothing it held before.
    ///
    /// ```swift
    /// try await server.startNewEpoch(for: account)
    /// ```
    ///
    /// The records, the head and the archive stay; what the server knew of each replica and of
    /// their changes goes, since no replica will push those again.
    ///
    /// - Parameter account: The account.
    /// - Throws: Nothing, in memory; a server with storage throws its failures.
    public func startNewEpoch(for account: SyncAccount) async throws {
        accounts.withLock { accounts in
            var state =
                accounts[account] ?? SyncAccountState(row: SyncAccountRow(epoch: SyncServerRules.initialEpoch))
            state.row.epoch = UUID()
            state.progress = [:]
            state.idempotency = [:]
            accounts[account] = state
        }
        pokes.send(.pullNow, to: account)
    }

    /// Collects the removals that every replica has pulled and that are older than `age`, in
    /// every account, and raises each account's horizon past them.
    ///
    /// ```swift
    /// try await server.collectTombstones(olderThan: .seconds(30 * 86_400))
    /// ```
    ///
    /// A replica whose cursor is below the horizon (one the server did not know when it
    /// collected, such as a copied directory) is answered ``SyncRefusal/resyncNeeded`` and pulls
    /// the whole state before it pushes.
    ///
    /// - Parameter age: How old a removal's stamp must be, by the server's clock.
    /// - Throws: Nothing, in memory; a server with storage throws its failures.
    public func collectTombstones(olderThan age: Duration) async throws {
        let cutoff = clock.milliseconds - age.components.seconds * 1_000
        accounts.withLock { accounts in
            for (id, var state) in accounts {
                let lowest = state.progress.values.map(\.cursor).min()
                for (key, record) in state.records
                where SyncServerRules.isCollectable(record.record, lowestCursor: lowest, olderThan: cutoff) {
                    state.records[key] = nil
                    state.row.horizon = max(state.row.horizon, record.version)
                }
                accounts[id] = state
            }
        }
    }

    // MARK: Test hooks

    /// Everything the server holds, for a test that restores it later (a restore from a backup).
    package struct Snapshot: Sendable {
        fileprivate let accounts: [SyncAccount: SyncAccountState]
    }

    /// Takes a snapshot of every account, as a backup would.
    package func snapshot() -> Snapshot {
        Snapshot(accounts: accounts.withLock { $0 })
    }

    /// Puts back what `snapshot` held, as a restore from a backup does: same epochs, histories
    /// behind what the replicas saw.
    package func restore(_ snapshot: Snapshot) {
        let ids = accounts.withLock { accounts in
            accounts = snapshot.accounts
            indexes.withLock { $0 = [:] }
            return Array(accounts.keys)
        }
        for id in ids {
            pokes.send(.pullNow, to: id)
        }
    }

    /// The state of one account, for a test's checks.
    package func state(of account: SyncAccount) -> SyncAccountState? {
        accounts.withLock { $0[account] }
    }

    /// How many times the index of `account`'s records by version was built from every record,
    /// for a test that checks pushes and pulls keep it instead.
    package func indexRebuilds(of account: SyncAccount) -> Int {
        accounts.withLock { _ in indexes.withLock { $0[account]?.rebuilds ?? 0 } }
    }

    // MARK: Requests

    /// Settles a push: each change by ``SyncServerRules``, under the lock, as one transaction;
    /// keys in their canonical composition (``SyncKey``).
    func push(_ request: SyncPushRequest) -> SyncPushResponse {
        let request = SyncKey.normalizingKeys(of: request)
        let account = SyncAccount(id: request.account)
        let now = clock.milliseconds
        let (response, wrote, reached) = accounts.withLock { accounts in
            // Taken out of the dictionary while it changes: a copy left in it would make the
            // first write copy every record.
            var state =
                accounts.removeValue(forKey: account)
                ?? SyncAccountState(row: SyncAccountRow(epoch: SyncServerRules.initialEpoch))
            defer { accounts[account] = state }
            let head = state.row.head
            let answer = SyncServerRules.answer(
                request, in: &state, serverTime: now, maximumClockAhead: maximumClockAhead)
            if answer.wrote {
                indexes.withLock { indexes in
                    guard var index = indexes.removeValue(forKey: account) else { return }
                    index.add(request.changes.lazy.map(\.key), after: head, in: state)
                    indexes[account] = index
                }
            }
            return (answer.response, answer.wrote, state.row.head)
        }
        if wrote {
            pokes.send(SyncPoke(author: request.replica, head: reached), to: account)
        }
        return response
    }

    func pull(_ request: SyncPullRequest) -> SyncPullResponse {
        let account = SyncAccount(id: request.account)
        let now = clock.milliseconds
        return accounts.withLock { accounts in
            var state =
                accounts.removeValue(forKey: account)
                ?? SyncAccountState(row: SyncAccountRow(epoch: SyncServerRules.initialEpoch))
            defer { accounts[account] = state }
            // The rules answer from the page's records alone, as they do the PostgreSQL server's.
            var page = indexes.withLock { indexes in
                var index = indexes.removeValue(forKey: account) ?? SyncVersionIndex(of: state)
                defer { indexes[account] = index }
                return index.page(after: request.cursor, limit: request.limit, of: state)
            }
            let response = SyncServerRules.answer(request, in: &page, serverTime: now)
            state.progress = page.progress
            return response
        }
    }

    private static func check(_ requested: String, is account: SyncAccount) throws {
        guard SyncAccount(id: requested) == account else {
            throw ValueStoreError(
                .invalidConfiguration, store: "in-memory sync server",
                reason: "a request for account '\(requested)' came through the remote of account '\(account.id)'")
        }
    }
}
