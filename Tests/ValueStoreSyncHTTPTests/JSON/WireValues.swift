import Foundation
import ValueStoreSync
import ValueStoreTestSupport

/// Random values of every shape a push's bodies take, and random damage to their bytes, for
/// `WireJSONTests`.
enum WireValues {
    /// Characters JSON must escape or that encoders write differently (`/`, controls, quotes,
    /// backslashes), and characters of one to four UTF-8 bytes.
    static let characters: [Character] = [
        "a", "Z", "0", " ", "/", "\"", "\\", "\n", "\t", "\r", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "\u{2028}", "😀",
        // Backspace and form feed, which JSONEncoder writes as `\b` and `\f`; a byte order
        // mark, which Foundation's `String(bytes:encoding:)` drops at the start.
        "\u{8}", "\u{C}", "\u{FEFF}",
    ]

    /// Whole numbers, their limits often among them.
    static func number<Number: FixedWidthInteger>(_ random: inout SeededRandom) -> Number {
        Bool.random(using: &random)
            ? [Number.min, .max, 0].randomElement(using: &random)! : Number.random(in: .min ... .max, using: &random)
    }

    /// A UUID from the generator, so a seed repeats it.
    static func uuid(_ random: inout SeededRandom) -> UUID {
        let bytes = random.bytes(16)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    static func text(_ random: inout SeededRandom) -> String {
        String((0..<Int.random(in: 0...12, using: &random)).map { _ in characters.randomElement(using: &random)! })
    }

    static func stamp(_ random: inout SeededRandom) -> HybridTimestamp {
        HybridTimestamp(
            milliseconds: number(&random), counter: number(&random), replica: ReplicaID(text(&random)))
    }

    static func maybe<Value>(_ random: inout SeededRandom, _ make: (inout SeededRandom) -> Value) -> Value? {
        Bool.random(using: &random) ? make(&random) : nil
    }

    static func record(_ random: inout SeededRandom) -> SyncRecord {
        SyncRecord(
            key: text(&random),
            value: maybe(&random) { Data(($0.bytes(Int.random(in: 0...40, using: &$0)))) },
            stamp: stamp(&random), origin: maybe(&random, stamp), base: maybe(&random, stamp),
            replaces: (0..<Int.random(in: 0...2, using: &random)).map { _ in stamp(&random) },
            policy: SyncRecord.Policy.allCases.randomElement(using: &random)!, isRestoring: Bool.random(using: &random),
            version: maybe(&random) { ServerVersion(number(&$0)) })
    }

    static func pushRequest(_ random: inout SeededRandom) -> SyncPushRequest {
        SyncPushRequest(
            account: text(&random), replica: ReplicaID(text(&random)), epoch: maybe(&random, uuid),
            seen: ServerVersion(Int64.random(in: 0...Int64.max, using: &random)),
            cursor: ServerVersion(Int64.random(in: 0...Int64.max, using: &random)),
            changes: (0..<Int.random(in: 0...4, using: &random)).map { _ in record(&random) })
    }

    static func outcome(_ random: inout SeededRandom) -> SyncPushResponse.Outcome {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: .accepted(ServerVersion(number(&random)))
        case 1: .overtaken(record(&random))
        case 2: .lost(record(&random))
        case 3: .lost(nil)
        case 4: .mergeNeeded(record(&random))
        case 5: .mergeNeeded(nil)
        case 6: .superseded
        case 7: .tooFarAhead
        default: .rejected(text(&random))
        }
    }

    static func pushResponse(_ random: inout SeededRandom) -> SyncPushResponse {
        let count = Int.random(in: 0...4, using: &random)
        return SyncPushResponse(
            epoch: uuid(&random), serverTime: number(&random),
            refusal: maybe(&random, refusal),
            outcomes: (0..<count).map { _ in outcome(&random) },
            settled: maybe(&random) { random in
                (0..<count).map { _ in SyncChangeName(key: text(&random), stamp: stamp(&random)) }
            })
    }

    static func refusal(_ random: inout SeededRandom) -> SyncRefusal {
        [SyncRefusal.epochChanged, .restored, .resyncNeeded].randomElement(using: &random)!
    }

    /// One to three changes to `bytes`: a byte replaced (often by one that matters to JSON), one
    /// removed, or one put in.
    static func damage(_ bytes: inout [UInt8], _ random: inout SeededRandom) {
        let meaningful = Array(#"{}[],:"\/-.e0123456789 nultrfa"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &random)
            let byte = meaningful.randomElement(using: &random)!
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[index] = byte
            case 1: bytes.remove(at: index)
            default: bytes.insert(byte, at: index)
            }
        }
    }
}
