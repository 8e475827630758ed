// What valuestore-sync-server serves, read from its environment.
#if PostgreSQL && Configuration && Hummingbird
import Configuration
import Foundation
import PostgresNIO
import ValueStorePostgres

/// The server's settings, read through swift-configuration's environment provider, so every
/// variable has one name and one default, written here:
///
/// | Variable | Default | |
/// |---|---|---|
/// | `VALUESTORE_SYNC_HOST` | `0.0.0.0` | the address to listen on (every interface, as in a container) |
/// | `VALUESTORE_SYNC_PORT` | `8080` | the port; `0` picks a free one, printed at start |
/// | `VALUESTORE_SYNC_TABLE` | `sync` | the `PostgresSyncTable`'s name |
/// | `VALUESTORE_SYNC_JWT_HS256_SECRET` | | an HS256 secret of at least 32 bytes |
/// | `VALUESTORE_SYNC_JWKS_FILE` | | a JSON Web Key Set file (exactly one of the two) |
/// | `VALUESTORE_SYNC_JWT_AUDIENCE` | | when set, a token's `aud` must name it |
/// | `VALUESTORE_SYNC_REQUESTS_PER_MINUTE` | `600` | each account's requests a minute, in this process; `0` turns the limit off |
/// | `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE` | | the database, as libpq reads them |
///
/// The database is configured when any of the five `PG*` variables is set (the others then take
/// libpq's defaults: `localhost`, 5432, the user's name, no password, a database named for the
/// user); with none of them the server serves from memory and says, in one line, that nothing is
/// durable.
struct SyncServerConfiguration: Sendable {
    /// A setting the server cannot start with, said in a sentence naming the variable.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// How tokens are verified.
    enum Keys: Sendable {
        /// An HS256 secret shared with whoever issues the tokens.
        case hs256(secret: String)
        /// The public keys in a JSON Web Key Set file.
        case jwks(file: String)
    }

    var host: String
    var port: Int
    var table: String
    var keys: Keys
    var audience: String?
    /// Each account's requests a minute (`SyncHTTPLimits.requestsPerMinutePerAccount`).
    var requestsPerMinute: Int
    /// The database, or `nil` to serve from memory.
    var database: PostgresClient.Configuration?

    /// The settings `reader` holds.
    /// - Throws: ``Invalid`` for a setting the server cannot start with.
    init(reader: ConfigReader) throws {
        host = reader.string(forKey: "valuestore.sync.host", default: "0.0.0.0")
        port = try Self.port(reader.string(forKey: "valuestore.sync.port"), name: "VALUESTORE_SYNC_PORT") ?? 8080
        table = reader.string(forKey: "valuestore.sync.table", default: "sync")
        let rate = reader.string(forKey: "valuestore.sync.requests.per.minute")
        guard let requestsPerMinute = rate.map({ Int($0) }) ?? 600, requestsPerMinute >= 0 else {
            throw Invalid(
                description: "VALUESTORE_SYNC_REQUESTS_PER_MINUTE=\(rate ?? "") is not a number of requests (0 or more)"
            )
        }
        self.requestsPerMinute = requestsPerMinute
        audience = reader.string(forKey: "valuestore.sync.jwt.audience").flatMap { $0.isEmpty ? nil : $0 }
        let secret = reader.string(forKey: "valuestore.sync.jwt.hs256.secret", isSecret: true)
        let file = reader.string(forKey: "valuestore.sync.jwks.file")
        switch (secret.flatMap { $0.isEmpty ? nil : $0 }, file.flatMap { $0.isEmpty ? nil : $0 }) {
        case (let secret?, nil):
            guard secret.utf8.count >= 32 else {
                throw Invalid(
                    description: "VALUESTORE_SYNC_JWT_HS256_SECRET is \(secret.utf8.count) bytes: an HS256 secret "
                        + "needs at least 32")
            }
            keys = .hs256(secret: secret)
        case (nil, let file?):
            keys = .jwks(file: file)
        case (nil, nil):
            throw Invalid(
                description: "no way to verify tokens: set VALUESTORE_SYNC_JWT_HS256_SECRET (a secret of at least "
                    + "32 bytes) or VALUESTORE_SYNC_JWKS_FILE (a JSON Web Key Set file)")
        case (_?, _?):
            throw Invalid(
                description: "both VALUESTORE_SYNC_JWT_HS256_SECRET and VALUESTORE_SYNC_JWKS_FILE are set: set one")
        }
        database = try Self.database(reader)
    }

    /// The database the `PG*` variables name, or `nil` when none is set.
    private static func database(_ reader: ConfigReader) throws -> PostgresClient.Configuration? {
        let environment = PostgresEnvironment { reader.string(forKey: ConfigKey($0.lowercased()), isSecret: true) }
        guard environment.namesServer else { return nil }
        return try saying { try environment.configuration() }
    }

    /// A port number from `text`, `nil` when there is none.
    private static func port(_ text: String?, name: String) throws -> Int? {
        try saying { try PostgresEnvironment.port(text, name: name) }
    }

    /// Runs `body`, throwing its ``PostgresEnvironment/Invalid`` as the server's ``Invalid``.
    private static func saying<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as PostgresEnvironment.Invalid {
            throw Invalid(description: error.description)
        }
    }
}
#endif
