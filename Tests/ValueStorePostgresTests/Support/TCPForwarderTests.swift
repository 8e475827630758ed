#if PostgreSQL
import Foundation
import PostgresNIO
import Synchronization
import Testing

extension PostgresTests {
    /// The forwarder the failure tests put between a client and the server does what each mode
    /// says, on one connection outside any pool.
    @Suite struct Forwarder {
        @Test func passForwardsQueriesBothWays() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                let connection = try await forwarder.connect()
                #expect(try await connection.selectOne() == 1)
                #expect(forwarder.openConnections == 1)
                try await connection.close()
                #expect(await eventually { forwarder.openConnections == 0 })
            }
        }

        @Test func refuseClosesThePortAndPassOpensItAgain() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                let open = try await forwarder.connect()
                forwarder.mode = .refuse
                await #expect(throws: (any Error).self) {
                    // Closed if it connects after all, so the failure is the expectation's.
                    try await forwarder.connect().close()
                }
                #expect(try await open.selectOne() == 1, "an open connection keeps forwarding")
                forwarder.mode = .pass
                let again = try await forwarder.connect()
                #expect(try await again.selectOne() == 1)
                try await open.close()
                try await again.close()
            }
        }

        @Test func resetFailsEveryOpenConnectionAtOnce() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                let connection = try await forwarder.connect()
                #expect(try await connection.selectOne() == 1)
                forwarder.mode = .reset
                #expect(await eventually { forwarder.openConnections == 0 })
                // The old connection gets no answer: an error, or (when postgres-nio has not yet
                // read the reset, as seen after other suites) nothing within 10 s; never a result.
                let answered = await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                    let first = FirstOutcome()
                    Task {
                        let value = try? await connection.selectOne()
                        if first.claim() { continuation.resume(returning: value) }
                    }
                    Task {
                        try? await Task.sleep(for: .seconds(10))
                        if first.claim() { continuation.resume(returning: nil) }
                    }
                }
                #expect(answered == nil, "a query answered through a reset connection")
                Task { try? await connection.close() }
                await #expect(throws: (any Error).self) { try await forwarder.connect() }
                forwarder.mode = .pass
                let again = try await forwarder.connect()
                #expect(try await again.selectOne() == 1)
                try await again.close()
            }
        }

        @Test func blackholeHoldsEveryAnswerUntilItPassesAgain() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                let connection = try await forwarder.connect()
                forwarder.mode = .blackhole
                let answered = Flag()
                let query = Task {
                    defer { answered.set() }
                    return try await connection.selectOne()
                }
                // Absence has no event to await: a generous look, then the claim.
                try await Task.sleep(for: .milliseconds(300))
                #expect(!answered.isSet, "nothing came back through the blackhole")
                #expect(forwarder.openConnections == 1, "and nothing was closed")
                forwarder.mode = .pass
                #expect(try await query.value == 1)
                try await connection.close()
            }
        }

        @Test func dropResponsesLosesTheAnswerToACommitThatApplied() async throws {
            try await PostgresServer.withClient { direct in
                let table = PostgresServer.scratchName()
                try await PostgresServer.execute(direct, "CREATE TABLE \(unescaped: table) (n bigint)")
                try await TCPForwarder.withForwarder { forwarder in
                    let logger = Logger(label: "forwarder-tests")
                    let connection = try await forwarder.connect()
                    try await connection.query("BEGIN", logger: logger)
                    forwarder.mode = .dropResponses
                    // Inside the transaction, answers pass.
                    try await connection.query("INSERT INTO \(unescaped: table) VALUES (1)", logger: logger)
                    await #expect(throws: (any Error).self, "the commit's answer never arrives") {
                        try await connection.query("COMMIT", logger: logger)
                    }
                    #expect(
                        try await PostgresServer.integer(direct, "SELECT count(*)::bigint FROM \(unescaped: table)")
                            == 1,
                        "yet the commit applied")
                    #expect(forwarder.droppedAnswers == 1)
                    try? await connection.close()
                    // A new connection starts up, and loses the answer to its first statement.
                    let fresh = try await forwarder.connect()
                    await #expect(throws: (any Error).self) { try await fresh.selectOne() }
                    Task { try? await fresh.close() }
                    forwarder.mode = .pass
                    let again = try await forwarder.connect()
                    #expect(try await again.selectOne() == 1)
                    try await again.close()
                }
                try await PostgresServer.execute(direct, "DROP TABLE \(unescaped: table)")
            }
        }

        @Test func blackholingOpenConnectionsLetsNewOnesPass() async throws {
            try await TCPForwarder.withForwarder { forwarder in
                let old = try await forwarder.connect()
                forwarder.blackholeOpenConnections()
                let fresh = try await forwarder.connect()
                #expect(try await fresh.selectOne() == 1)
                let answered = Flag()
                let query = Task {
                    defer { answered.set() }
                    return try await old.selectOne()
                }
                try await Task.sleep(for: .milliseconds(300))
                #expect(!answered.isSet, "the old connection hangs")
                try await fresh.close()
                forwarder.resetConnections()
                await #expect(throws: PSQLError.self) { try await query.value }
                // Closed before it goes: postgres-nio asserts that no connection is dropped open,
                // and the reset may not have reached it yet.
                try? await old.close()
            }
        }
    }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

extension PostgresConnection {
    /// Runs `SELECT 1` and returns its answer.
    func selectOne() async throws -> Int {
        var result = 0
        for try await row in try await query("SELECT 1::bigint", logger: Logger(label: "forwarder-tests")) {
            result = try row.decode(Int.self)
        }
        return result
    }
}
/// Which of two racing tasks finished first: only the first claim succeeds.
private final class FirstOutcome: Sendable {
    private let claimed = Atomic<Bool>(false)

    func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
#endif
