import Foundation
import Testing
import ValueStore
import ValueStoreTesting

/// The fixed-width integers as `PropertyListValue`s: each round-trips through UserDefaults at its
/// extremes, through a property-list file as Foundation writes one, and reads strictly.
@Suite struct FixedWidthIntegerTests {
    @Test func everyFixedWidthIntegerObeysTheLaws() async throws {
        try await TemporarySuite.with { suite in
            try await Self.checkLaws(Int8.self, in: suite)
            try await Self.checkLaws(Int16.self, in: suite)
            try await Self.checkLaws(Int32.self, in: suite)
            try await Self.checkLaws(Int64.self, in: suite)
            try await Self.checkLaws(UInt.self, in: suite)
            try await Self.checkLaws(UInt8.self, in: suite)
            try await Self.checkLaws(UInt16.self, in: suite)
            try await Self.checkLaws(UInt32.self, in: suite)
            try await Self.checkLaws(UInt64.self, in: suite)
        }
    }

    static func checkLaws<Integer: FixedWidthInteger & PropertyListValue>(
        _ type: Integer.Type, in suite: TemporarySuite
    ) async throws {
        let store = ValueStore<Void, Integer>.userDefaults("\(Integer.self)", suiteName: suite.name)
        try await ValueStoreLaws.check(store, samples: .min, .max)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func theExtremesSurviveAPropertyListFile(format: PropertyListSerialization.PropertyListFormat) throws {
        let written: [String: Any] = [
            "i8": Int8.min.propertyListObject, "i64": Int64.min.propertyListObject,
            "u32": UInt32.max.propertyListObject, "u64": UInt64.max.propertyListObject,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: written, format: format, options: 0)
        let read = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(Int8(propertyListObject: read["i8"]!) == .min)
        #expect(Int64(propertyListObject: read["i64"]!) == .min)
        #expect(UInt32(propertyListObject: read["u32"]!) == .max)
        #expect(UInt64(propertyListObject: read["u64"]!) == .max)
        #expect(Int64(propertyListObject: read["u64"]!) == nil, "UInt64.max does not fit")
    }

    @Test func aStoredValueThatDoesNotFitIsDecodingFailed() async throws {
        try await TemporarySuite.with { suite in
            suite.defaults.set(300, forKey: "small")
            suite.defaults.set(-1, forKey: "unsigned")
            suite.defaults.set(2.0, forKey: "real")
            suite.defaults.set(true, forKey: "flag")
            let name = suite.name
            await #expect(throws: ValueStoreError(.decodingFailed), "300 is not an Int8") {
                try await ValueStore<Void, Int8>.userDefaults("small", suiteName: name).load()
            }
            let wider = try await ValueStore<Void, Int16>.userDefaults("small", suiteName: name).load()
            #expect(wider == 300)
            await #expect(throws: ValueStoreError(.decodingFailed), "-1 is not a UInt") {
                try await ValueStore<Void, UInt>.userDefaults("unsigned", suiteName: name).load()
            }
            await #expect(throws: ValueStoreError(.decodingFailed), "a real number is not an integer") {
                try await ValueStore<Void, Int32>.userDefaults("real", suiteName: name).load()
            }
            await #expect(throws: ValueStoreError(.decodingFailed), "a Boolean is not an integer") {
                try await ValueStore<Void, UInt8>.userDefaults("flag", suiteName: name).load()
            }
            #expect(suite.defaults.integer(forKey: "small") == 300, "nothing was overwritten")
        }
    }

    @Test func arraysAndDictionariesOfThemConform() async throws {
        try await TemporarySuite.with { suite in
            let bytes = ValueStore<Void, [UInt8]>.userDefaults("bytes", suiteName: suite.name)
            try await ValueStoreLaws.check(bytes, samples: [0, 255], [])
            let limits = ValueStore<Void, [String: Int64]>.userDefaults("limits", suiteName: suite.name)
            try await ValueStoreLaws.check(limits, samples: ["low": .min, "high": .max], [:])
        }
    }
}
