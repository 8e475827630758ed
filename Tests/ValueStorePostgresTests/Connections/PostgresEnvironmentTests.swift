#if PostgreSQL
import PostgresNIO
import Testing
import ValueStorePostgres

@Suite struct PostgresEnvironmentTests {
    @Test func theVariablesNameTheServerAndTheOthersTakeLibpqsDefaults() throws {
        let environment = PostgresEnvironment(["PGHOST": "db.internal", "PGUSER": "app", "PGPASSWORD": "secret"])
        #expect(environment.namesServer)
        let configuration = try environment.configuration()
        #expect(configuration.host == "db.internal")
        #expect(configuration.port == 5432)
        #expect(configuration.username == "app")
        #expect(configuration.password == "secret")
        #expect(configuration.database == "app")
    }

    @Test func aForwardersHostPortAndPasswordReplaceTheVariables() throws {
        let environment = PostgresEnvironment(["PGHOST": "db.internal", "PGPORT": "5433", "PGDATABASE": "values"])
        let configuration = try environment.configuration(host: "127.0.0.1", port: 6000, password: "other")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 6000)
        #expect(configuration.password == "other")
        #expect(configuration.database == "values")
        #expect(try environment.configuration().port == 5433)
    }

    @Test func noneOfTheFiveSetNamesNoServer() {
        #expect(!PostgresEnvironment(["PGSSLMODE": "disable", "HOME": "/root"]).namesServer)
    }

    @Test(arguments: [
        (["PGPORT": "eighty"], "PGPORT=eighty is not a port number (0 to 65535)"),
        (["PGPORT": "70000"], "PGPORT=70000 is not a port number (0 to 65535)"),
        (["PGHOST": "db", "PGSSLMODE": "require"], "PGSSLMODE=require is not supported"),
    ])
    func aValueNoClientCanUseIsRefusedByName(variables: [String: String], saying: String) {
        #expect {
            _ = try PostgresEnvironment(variables).configuration()
        } throws: { error in
            (error as? PostgresEnvironment.Invalid)?.description.hasPrefix(saying) == true
        }
    }
}
#endif
