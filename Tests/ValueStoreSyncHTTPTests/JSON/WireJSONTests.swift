import Foundation
import Testing
import ValueStoreSync
import ValueStoreTestSupport

@testable import ValueStoreSyncHTTP

/// The fast path of a push's bodies against Foundation's coders, the reference: what the writer
/// writes, `JSONDecoder` reads to the same value; what the reader reads, `JSONDecoder` reads to
/// the same value; and what the reader leaves (``WireJSONReader/Unread``), `JSONDecoder` decides.
/// Randomized with fixed seeds, each named in its failures; a seed repeats its values and damage.
@Suite struct WireJSONTests {
    /// The fast path alone, with no fallback: `nil` where it leaves the bytes to `JSONDecoder`.
    static func fastRead<Value: WireJSONCodable>(_: Value.Type, _ data: Data) -> Value? {
        try? WireJSONReader.read(data) { try Value(wire: &$0) }
    }

    static func written(_ value: some WireJSONCodable) -> Data {
        var writer = WireJSONWriter()
        value.write(to: &writer)
        return writer.data
    }

    /// Every encoding of `value` the fast reader must read: its own, and `JSONEncoder`'s with
    /// each formatting an older client or server could have used.
    static func encodings<Value: WireJSONCodable>(of value: Value) throws -> [Data] {
        var all = [written(value)]
        for formatting: JSONEncoder.OutputFormatting in [[], .prettyPrinted, .sortedKeys, .withoutEscapingSlashes] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = formatting
            all.append(try encoder.encode(value))
        }
        return all
    }

    @Test func theFrozenV1BodiesReadToTheirValuesOnTheFastPath() throws {
        let fixtures = WireFixtureTests()
        #expect(
            Self.fastRead(SyncPushRequest.self, try fixtures.fixture("push-request.json"))
                == WireFixtureTests.pushRequest)
        #expect(
            Self.fastRead(SyncPushResponse.self, try fixtures.fixture("push-response.json"))
                == WireFixtureTests.pushResponse)
        #expect(
            Self.fastRead(SyncPushResponse.self, try fixtures.fixture("push-response-refused.json"))
                == WireFixtureTests.refusedPush)
    }

    /// `value` written by the fast path reads back through `JSONDecoder`, and every encoding of
    /// it reads back on the fast path.
    static func roundTrip<Value: WireJSONCodable & Equatable>(_ value: Value, _ context: String) throws {
        #expect(try JSONDecoder().decode(Value.self, from: written(value)) == value, "\(context)")
        for data in try encodings(of: value) {
            #expect(fastRead(Value.self, data) == value, "\(context): \(String(decoding: data, as: UTF8.self))")
        }
    }

    @Test(arguments: [UInt64(0x5EED_1001), 0x5EED_1002, 0x5EED_1003])
    func randomBodiesRoundTripThroughBothCoders(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        for round in 0..<60 {
            let context = "seed \(seed), round \(round)"
            try Self.roundTrip(WireValues.pushRequest(&random), context)
            try Self.roundTrip(WireValues.pushResponse(&random), context)
        }
    }

    /// `value`'s bytes damaged: whatever the fast reader still reads, `JSONDecoder` reads to the
    /// same value; what it does not, `WireJSON.decode` answers as `JSONDecoder` does. Whether
    /// the fast reader read it.
    static func damaged<Value: WireJSONCodable & Equatable>(
        _ value: Value, _ random: inout SeededRandom, _ context: String
    ) throws -> Bool {
        // Sorted, so a seed damages the same bytes on every run.
        let encoder = JSONEncoder()
        encoder.outputFormatting = Bool.random(using: &random) ? [.prettyPrinted, .sortedKeys] : .sortedKeys
        var bytes = [UInt8](Bool.random(using: &random) ? written(value) : try encoder.encode(value))
        WireValues.damage(&bytes, &random)
        let data = Data(bytes)
        let reference = try? JSONDecoder().decode(Value.self, from: data)
        #expect((try? WireJSON.decode(Value.self, from: data)) == reference, "\(context)")
        guard let fast = fastRead(Value.self, data) else { return false }
        #expect(fast == reference, "\(context): \(String(decoding: data, as: UTF8.self))")
        return true
    }

    @Test(arguments: [UInt64(0xF022_2001), 0xF022_2002])
    func damagedBodiesReadAsJSONDecoderReadsThem(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var readFast = 0
        for round in 0..<200 {
            let context = "seed \(seed), round \(round)"
            for read in [
                try Self.damaged(WireValues.pushRequest(&random), &random, context),
                try Self.damaged(WireValues.pushResponse(&random), &random, context),
            ] where read {
                readFast += 1
            }
        }
        // Some damage leaves a body readable (a changed digit, a changed letter of a value): the
        // comparison above ran on those.
        #expect(readFast > 0, "seed \(seed)")
    }

    @Test(arguments: [
        // A repeated key, an unknown key, a key written with an escape.
        #"{"key":"a","key":"b","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","extra":1,"stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"k\u0065y":"a","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        // Numbers JSON or the type does not allow plainly: a leading zero, minus zero, a
        // fraction, an exponent, a negative counter, one too large.
        #"{"key":"a","stamp":{"milliseconds":01,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":-0,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":1.0,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":1e3,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":1,"counter":-1,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":1,"counter":4294967296,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        // Text: a lone surrogate, a raw control character, invalid UTF-8 below; bad Base64.
        #"{"key":"\ud800","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        "{\"key\":\"a\u{1}\",\"stamp\":{\"milliseconds\":1,\"counter\":0,\"replica\":\"r\"},\"replaces\":[],\"policy\":\"merge\",\"isRestoring\":false}",
        #"{"key":"a","value":"not base64!","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        // A byte order mark before a policy, a UUID or Base64 (JSONDecoder refuses each).
        "{\"key\":\"a\",\"stamp\":{\"milliseconds\":1,\"counter\":0,\"replica\":\"r\"},\"replaces\":[],\"policy\":\"\u{FEFF}merge\",\"isRestoring\":false}",
        "{\"key\":\"a\",\"value\":\"\u{FEFF}AAA\\/\",\"stamp\":{\"milliseconds\":1,\"counter\":0,\"replica\":\"r\"},\"replaces\":[],\"policy\":\"merge\",\"isRestoring\":false}",
        // A missing field, a null one that is not optional, an unknown policy, trailing bytes.
        #"{"key":"a","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"policy":"merge","isRestoring":false}"#,
        #"{"key":null,"stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"newest","isRestoring":false}"#,
        #"{"key":"a","stamp":{"milliseconds":1,"counter":0,"replica":"r"},"replaces":[],"policy":"merge","isRestoring":false} x"#,
    ])
    func whatTheFastPathLeavesJSONDecoderDecides(record: String) throws {
        let data =
            Data(
                #"{"account":"a","replica":"r","seen":0,"cursor":0,"changes":["#.utf8) + Data(record.utf8)
            + Data("]}".utf8)
        #expect(Self.fastRead(SyncPushRequest.self, data) == nil)
        let reference = try? JSONDecoder().decode(SyncPushRequest.self, from: data)
        #expect((try? WireJSON.decode(SyncPushRequest.self, from: data)) == reference)
    }

    /// A byte order mark is a character of the text: Foundation's `String(bytes:encoding:)`
    /// drops one at the start, `JSONDecoder` keeps it, and so must the fast path, in plain text
    /// and after an escape.
    @Test(arguments: ["\u{FEFF}theme", "\u{1}\u{FEFF}theme", "theme\u{FEFF}"])
    func aByteOrderMarkInTextIsKept(key: String) throws {
        let request = SyncPushRequest(
            account: "\u{FEFF}user-42", replica: ReplicaID("phone-1"), epoch: nil, seen: ServerVersion(0),
            cursor: ServerVersion(0),
            changes: [
                SyncRecord(
                    key: key, value: nil,
                    stamp: HybridTimestamp(milliseconds: 1, counter: 0, replica: ReplicaID("phone-1")), base: nil,
                    policy: .merge)
            ])
        for data in try Self.encodings(of: request) {
            #expect(Self.fastRead(SyncPushRequest.self, data) == request)
        }
    }

    /// Escapes neither encoder writes for these characters, a surrogate pair among them, read
    /// on the fast path to what `JSONDecoder` reads.
    @Test(arguments: [#"\ud83d\ude00"#, #"\u00E9\u00e9"#, #"\b\f\/\"\\"#, #"a\u0000b"#, #"\uFEFFx"#])
    func escapesReadAsJSONDecoderReadsThem(escaped: String) throws {
        let data = Data(
            #"{"account":"\#(escaped)","replica":"\#(escaped)","seen":0,"cursor":0,"changes":[]}"#.utf8)
        let fast = try #require(Self.fastRead(SyncPushRequest.self, data))
        #expect(fast == (try JSONDecoder().decode(SyncPushRequest.self, from: data)))
    }

    @Test func invalidUTF8IsLeftToJSONDecoder() throws {
        var data = Data(#"{"account":""#.utf8)
        data.append(contentsOf: [0xC3, 0x28])
        data.append(contentsOf: Data(#"","replica":"r","seen":0,"cursor":0,"changes":[]}"#.utf8))
        #expect(Self.fastRead(SyncPushRequest.self, data) == nil)
        #expect(
            (try? WireJSON.decode(SyncPushRequest.self, from: data))
                == (try? JSONDecoder().decode(SyncPushRequest.self, from: data)))
    }

    /// A pull's bodies have no fast path: `JSONDecoder` reads them, ignoring a key it does not
    /// know as it always has.
    @Test func otherBodiesGoThroughFoundationsCoders() throws {
        let pull = WireFixtureTests.pullRequest
        #expect(try JSONDecoder().decode(SyncPullRequest.self, from: WireJSON.encode(pull)) == pull)
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(pull)) as? [String: Any])
        object["addedByALaterRelease"] = 1
        let extended = try JSONSerialization.data(withJSONObject: object)
        #expect(try WireJSON.decode(SyncPullRequest.self, from: extended) == pull)
    }
}
