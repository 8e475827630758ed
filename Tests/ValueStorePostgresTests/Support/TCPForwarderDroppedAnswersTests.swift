#if PostgreSQL
import Foundation
import PostgresNIO
import Testing

extension PostgresTests.Forwarder {
    /// ``TCPForwarder/Mode/dropAnswers``, which the chaos test's HTTP mode uses between devices
    /// and servers, knows no protocol: shown here on a PostgreSQL connection, whose statement the
    /// server runs while its answer is lost.
    @Test func dropAnswersForwardsTheRequestAndLosesWhateverComesBack() async throws {
        try await PostgresServer.withClient { direct in
            let table = PostgresServer.scratchName()
            try await TCPForwarder.withForwarder { forwarder in
                let logger = Logger(label: "forwarder-tests")
                let connection = try await forwarder.connect()
                forwarder.mode = .dropAnswers
                await #expect(throws: (any Error).self, "the answer never arrives") {
                    try await connection.query("CREATE TABLE \(unescaped: table) (n bigint)", logger: logger)
                }
                #expect(forwarder.droppedAnswers == 1)
                #expect(
                    try await PostgresServer.integer(
                        direct, "SELECT count(*)::bigint FROM pg_class WHERE relname = '\(unescaped: table)'") == 1,
                    "yet the statement ran")
                try? await connection.close()
                forwarder.mode = .pass
                let again = try await forwarder.connect()
                #expect(try await again.selectOne() == 1)
                try await again.close()
            }
            try await PostgresServer.execute(direct, "DROP TABLE IF EXISTS \(unescaped: table)")
        }
    }
}
#endif
