import Testing
import ValueStore
import ValueStoreTesting

/// An object that is not `Sendable`: the store reads and writes it on the caller's executor.
final class Account {
    var token: String?
}

/// A main-actor model, whose key paths are not `Sendable`.
@MainActor final class Model {
    var name: String?
}

@Suite struct PropertyTests {
    @Test func nilIsAbsentSavingSetsAndRemovingClears() async throws {
        let account = Account()
        let token = (\Account.token).valueStore()
        _ = try await token.save("abc", account)  // account.token == "abc"
        #expect(account.token == "abc")
        #expect(try await token.load(account) == "abc")
        try await token.remove(account)  // account.token == nil
        #expect(account.token == nil)
        let error = await #expect(throws: ValueStoreError.self) { try await token.load(account) }
        #expect(error?.code == .notFound)
        #expect(error?.store == "property \\Account.token")
    }

    @Test func theKeyPathMethodAndTheConstructorAreTheSameStore() async throws {
        let account = Account()
        let token = ValueStore<Account, String>.property(\.token)
        _ = try await token.save("abc", account)  // account.token == "abc"
        #expect(try await (\Account.token).valueStore().load(account) == "abc")
        try await token.remove(account)  // account.token == nil
        #expect(account.token == nil)
        #expect(token.label == (\Account.token).valueStore().label)
    }

    @Test func oneStoreServesEveryObject() async throws {
        let token = ValueStore<Account, String>.property(\.token)
        let first = Account()
        let second = Account()
        _ = try await token.save("1", first)
        _ = try await token.save("2", second)
        #expect(first.token == "1")
        #expect(second.token == "2")
    }

    @Test func updatesInOneStep() async throws {
        let account = Account()
        account.token = "a"
        let token = (\Account.token).valueStore()
        #expect(try await token.update(environment: account) { $0 += "b" } == "ab")
        #expect(account.token == "ab")
        #expect(try await token.update(account) { $0 = nil } == nil)
        #expect(account.token == nil)
    }

    @Test func obeysTheLaws() async throws {
        let token = (\Account.token).valueStore()
        try await ValueStoreLaws.check(token, environment: Account(), samples: "a", "b")
    }

    @Test func composesWithCombinators() async throws {
        let account = Account()
        let count = (\Account.token).valueStore().map(load: { Int($0) ?? 0 }, save: { String($0) }).default(0)
        #expect(try await count.update(environment: account) { $0 += 1 } == 1)
        #expect(account.token == "1")
    }

    @MainActor @Test func aMainActorModelUsesMainActorClosures() async throws {
        let model = Model()
        let name = ValueStore<Model, String>(
            load: { @MainActor model in
                guard let name = model.name else { throw ValueStoreError.notFound }
                return name
            },
            save: { @MainActor name, model in
                model.name = name
                return name
            },
            remove: { @MainActor model in model.name = nil }
        )
        await #expect(throws: ValueStoreError.notFound) { try await name.load(model) }
        _ = try await name.save("Ada", model)
        #expect(model.name == "Ada")
        #expect(try await name.update(environment: model) { $0 += "!" } == "Ada!")
        try await name.remove(model)
        #expect(model.name == nil)
    }
}
