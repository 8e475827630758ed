import Foundation
import Testing
import ValueStore
import ValueStoreTesting

/// A UserDefaults suite of its own for one test, removed afterwards, never in the user's home.
///
/// On Linux, Foundation keeps a suite named by an absolute path in that file, so the suite lives
/// in a temporary directory (a plain name would land in `~/.config`). On Apple platforms the
/// suite is a domain of the test process's own preferences.
struct TemporarySuite {
    #if os(Linux)
    let name = FileManager.default.temporaryDirectory
        .appendingPathComponent("ValueStoreTests.\(UUID().uuidString)").path
    #else
    let name = "ValueStoreTests.\(UUID().uuidString)"
    #endif

    var defaults: UserDefaults { UserDefaults(suiteName: name)! }

    static func with<Result>(_ body: (_ suite: TemporarySuite) async throws -> Result) async throws -> Result {
        let suite = TemporarySuite()
        defer {
            suite.defaults.removePersistentDomain(forName: suite.name)
            #if os(Linux)
            try? FileManager.default.removeItem(atPath: suite.name + ".plist")
            #endif
        }
        return try await body(suite)
    }
}

@Suite struct UserDefaultsTests {
    struct Profile: Codable, Sendable, Equatable {
        var name: String
    }

    @Test func everyPropertyListTypeObeysTheLaws() async throws {
        try await TemporarySuite.with { suite in
            let name = suite.name
            try await ValueStoreLaws.check(ValueStore<Void, Int>.userDefaults("int", suiteName: name), samples: 3, -7)
            try await ValueStoreLaws.check(
                ValueStore<Void, Bool>.userDefaults("bool", suiteName: name), samples: true, false)
            try await ValueStoreLaws.check(
                ValueStore<Void, Double>.userDefaults("double", suiteName: name), samples: 0.5, 2)
            try await ValueStoreLaws.check(
                ValueStore<Void, Float>.userDefaults("float", suiteName: name), samples: 0.5, 2)
            try await ValueStoreLaws.check(
                ValueStore<Void, String>.userDefaults("string", suiteName: name), samples: "a", "")
            try await ValueStoreLaws.check(
                ValueStore<Void, Data>.userDefaults("data", suiteName: name), samples: Data([1]), Data())
            try await ValueStoreLaws.check(
                ValueStore<Void, Date>.userDefaults("date", suiteName: name),
                samples: Date(timeIntervalSince1970: 1_000), Date(timeIntervalSince1970: 2_000))
            try await ValueStoreLaws.check(
                ValueStore<Void, [String]>.userDefaults("array", suiteName: name), samples: ["a", "b"], [])
            try await ValueStoreLaws.check(
                ValueStore<Void, [String: Int]>.userDefaults("dictionary", suiteName: name), samples: ["a": 1], [:])
            try await ValueStoreLaws.check(
                ValueStore<Void, Data>.userDefaults("profile", suiteName: name).coded(.json),
                samples: Profile(name: "a"), Profile(name: "b"))
        }
    }

    @Test func onlyPropertyListTypesConform() {
        #expect(([Int].self as Any.Type) is any PropertyListValue.Type)
        #expect(([String: [Date]].self as Any.Type) is any PropertyListValue.Type)
        #expect(!(([Profile].self as Any.Type) is any PropertyListValue.Type), "[MyStruct] is not a property list")
        #expect(!(([Int: Int].self as Any.Type) is any PropertyListValue.Type), "keys are strings")
    }

    @Test func aValueOfAnotherTypeIsDecodingFailedNeverAbsence() async throws {
        try await TemporarySuite.with { suite in
            suite.defaults.set(1, forKey: "flag")
            suite.defaults.set("sk_live_secret", forKey: "count")
            let flag = ValueStore<Void, Bool>.userDefaults("flag", suiteName: suite.name)
            await #expect(throws: ValueStoreError(.decodingFailed), "a stored 1 is not a Bool") {
                try await flag.load()
            }
            await #expect(throws: ValueStoreError(.decodingFailed)) { try await flag.optional().load() }
            await #expect(throws: ValueStoreError(.decodingFailed)) {
                try await flag.default(false).update { $0.toggle() }
            }
            let error = await #expect(throws: ValueStoreError(.decodingFailed)) {
                try await ValueStore<Void, Int>.userDefaults("count", suiteName: suite.name).load()
            }
            #expect(error?.reason == "the stored value is a string, not Int")
            #expect(suite.defaults.object(forKey: "flag") != nil, "nothing was overwritten")
        }
    }

    @Test func aRegisteredDefaultIsNotAStoredValueAfterRemove() async throws {
        try await TemporarySuite.with { suite in
            suite.defaults.register(defaults: ["theme": "light"])
            let theme = ValueStore<Void, String>.userDefaults("theme", suiteName: suite.name)
            try await theme.save("dark")
            #expect(try await theme.load() == "dark")
            try await theme.remove()
            await #expect(throws: ValueStoreError.notFound) { try await theme.load() }
            #expect(suite.defaults.string(forKey: "theme") == "light", "UserDefaults itself still answers the default")
        }
    }

    #if canImport(Darwin)
    @Test func aValueOnlyRegisteredIsAbsent() async throws {
        try await TemporarySuite.with { suite in
            suite.defaults.register(defaults: ["registeredOnly": 5])
            await #expect(throws: ValueStoreError.notFound) {
                try await ValueStore<Void, Int>.userDefaults("registeredOnly", suiteName: suite.name).load()
            }
        }
    }
    #endif

    #if !canImport(Darwin)
    /// Foundation on Linux writes UserDefaults as XML, whose dates hold whole seconds: the next
    /// process would read a different date, so the store refuses it instead.
    @Test func onLinuxADateWithAFractionIsRefusedNotTruncated() async throws {
        try await TemporarySuite.with { suite in
            let whole = Date(timeIntervalSinceReferenceDate: 785_000_123)
            let when = ValueStore<Void, Date>.userDefaults("when", suiteName: suite.name)
            try await when.save(whole)
            await #expect(throws: ValueStoreError(.encodingFailed)) {
                try await when.save(Date(timeIntervalSinceReferenceDate: 785_000_123.25))
            }
            await #expect(throws: ValueStoreError(.encodingFailed)) {
                try await ValueStore<Void, [String: [Date]]>.userDefaults("nested", suiteName: suite.name)
                    .save(["a": [whole, Date(timeIntervalSinceReferenceDate: 0.5)]])
            }
            #expect(try await when.load() == whole, "nothing changed")
        }
    }
    #endif

    @Test func updatesAreAtomicWithinTheProcess() async throws {
        try await TemporarySuite.with { suite in
            let counter = ValueStore<Void, Int>.userDefaults("counter", suiteName: suite.name).default(0)
            try await concurrently(100) { _ in try await counter.update { $0 += 1 } }
            #expect(try await ValueStore<Void, Int>.userDefaults("counter", suiteName: suite.name).load() == 100)
        }
    }

    @Test func everyStoreOfAKeyHearsTheOthersWrites() async throws {
        try await TemporarySuite.with { suite in
            let log = StateLog(ValueStore<Void, Int>.userDefaults("count", suiteName: suite.name).changes())
            #expect(await log.waitForLast("absent"))
            try await ValueStore<Void, Int>.userDefaults("count", suiteName: suite.name).save(4)
            #expect(await log.waitForLast("4"))
            try await ValueStore<Void, Int>.userDefaults("count", suiteName: suite.name).remove()
            #expect(await log.waitForLast("absent"))
        }
    }

    @Test func migratingOneKeyIntoAFile() async throws {
        try await TemporarySuite.with { suite in
            try await TemporaryDirectory.with { directory in
                suite.defaults.set(7, forKey: "launchCount")
                let launches = ValueStore<Void, Int>.jsonFile(directory.appending(path: "launches.json"))
                    .replacing(.userDefaults("launchCount", suiteName: suite.name))
                let updated = try await launches.update { $0 += 1 }
                #expect(updated == 8)
                #expect(suite.defaults.object(forKey: "launchCount") == nil)
            }
        }
    }
}
