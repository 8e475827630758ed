import Testing
import ValueStore
import ValueStoreTesting

@Suite struct EnvironmentTests {
    struct Account: Sendable {
        var id: String
    }

    struct AppEnvironment: Sendable {
        var account: Account
    }

    /// A store that keeps one value per account id.
    static func perAccount() -> ValueStore<Account, Int> {
        let values = ValueStore<Void, [String: Int]>.inMemory([:])
        return ValueStore<Account, Int>(
            load: { account in
                guard let value = try await values.load()[account.id] else { throw ValueStoreError.notFound }
                return value
            },
            save: { value, account in
                try await values.update { $0[account.id] = value }
                return value
            },
            remove: { account in try await values.update { $0[account.id] = nil } }
        )
    }

    @Test func provideFixesTheEnvironment() async throws {
        let store = Self.perAccount()
        let alice = store.provide(Account(id: "alice"))
        let bob = store.provide(Account(id: "bob"))
        try await alice.save(1)
        try await bob.save(2)
        #expect(try await alice.load() == 1)
        #expect(try await store.load(Account(id: "bob")) == 2)
        try await ValueStoreLaws.check(alice, samples: 3, 4)
    }

    @Test func pullbackReadsAWiderEnvironment() async throws {
        let store = Self.perAccount()
        let byClosure = store.pullback { (environment: AppEnvironment) in environment.account }
        let byKeyPath = store.pullback(\AppEnvironment.account)
        let app = AppEnvironment(account: Account(id: "carol"))
        _ = try await byClosure.save(5, app)
        #expect(try await byKeyPath.load(app) == 5)
        try await ValueStoreLaws.check(byKeyPath, environment: app, samples: 6, 7)
    }

    @Test func requireAcceptsAnyEnvironment() async throws {
        let store = ValueStore<Void, Int>.inMemory(1).require(Account.self)
        #expect(try await store.load(Account(id: "anyone")) == 1)
        try await ValueStoreLaws.check(store, environment: Account(id: "x"), samples: 2, 3)
    }

    @Test func updateStaysAtomicThroughEnvironmentCombinators() async throws {
        let base = ValueStore<Account, Int>.inMemory(0)
        let provided = base.provide(Account(id: "a"))
        let pulled = base.pullback(\AppEnvironment.account)
        let required = ValueStore<Void, Int>.inMemory(0).require(Account.self)
        let app = AppEnvironment(account: Account(id: "a"))
        try await concurrently(300) { index in
            switch index % 3 {
            case 0: try await provided.update { $0 += 1 }
            case 1: try await pulled.update(environment: app) { $0 += 1 }
            default: try await required.update(environment: Account(id: "b")) { $0 += 1 }
            }
        }
        #expect(try await provided.load() == 200)
        #expect(try await required.load(Account(id: "c")) == 100)
    }
}
