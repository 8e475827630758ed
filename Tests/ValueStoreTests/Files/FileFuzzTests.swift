import Foundation
import Testing
import ValueStore
import ValueStoreTestSupport

/// Feeds thousands of random, truncated and bit-flipped inputs to each file format: every one
/// must load as a value or throw a typed error that says the data is bad, never crash and never
/// report absence.
@Suite struct FileFuzzTests {
    enum Format: String, CaseIterable, CustomTestStringConvertible {
        case json, binaryPropertyList, xmlPropertyList

        var testDescription: String { rawValue }

        var codec: Codec<Settings, Data> {
            switch self {
            case .json: .json
            case .binaryPropertyList: .propertyList
            case .xmlPropertyList: .propertyList(format: .xml)
            }
        }
    }

    /// Inputs derived from a valid encoding: every truncation, 1,500 bit flips, 1,000 random.
    static func inputs(from valid: Data, random: inout SeededRandom) -> [(kind: String, data: Data)] {
        var inputs: [(String, Data)] = []
        for length in 0..<valid.count {
            inputs.append(("truncated to \(length)", valid.prefix(length)))
        }
        for _ in 0..<1_500 {
            var flipped = valid
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<flipped.count, using: &random)
                flipped[index] ^= 1 << UInt8.random(in: 0...7, using: &random)
            }
            inputs.append(("bit-flipped", flipped))
        }
        for _ in 0..<1_000 {
            inputs.append(("random", Data(random.bytes(Int.random(in: 0...300, using: &random)))))
        }
        return inputs
    }

    @Test(arguments: Format.allCases)
    func badInputGivesATypedError(format: Format) throws {
        var random = SeededRandom(seed: 0x5EED_0000 + UInt64(format.rawValue.count))
        let valid = try format.codec.to(.custom)
        for (kind, data) in Self.inputs(from: valid, random: &random) {
            do {
                let decoded = try format.codec.from(data)
                // A flipped bit can leave valid data, and the XML parser forgives a missing
                // closing tag; otherwise bad input must not decode.
                #expect(kind == "bit-flipped" || decoded == .custom, "a \(kind) input decoded: \(decoded)")
            } catch let error as ValueStoreError {
                #expect(error.code == .corrupted || error.code == .decodingFailed, "\(kind): \(error)")
            }
        }
    }

    @Test(arguments: Format.allCases)
    func badFilesGiveATypedErrorAndStayUntouched(format: Format) async throws {
        try await TemporaryDirectory.with { directory in
            var random = SeededRandom(seed: 0xF11E + UInt64(format.rawValue.count))
            let url = directory.appending(path: "settings")
            let store = ValueStore<Void, Data>.file(url).coded(format.codec).default(.standard)
            let valid = try format.codec.to(.custom)
            for (kind, data) in Self.inputs(from: valid, random: &random).shuffled(using: &random).prefix(300) {
                try data.write(to: url)
                do {
                    _ = try await store.load()
                } catch let error as ValueStoreError {
                    #expect(error.code == .corrupted || error.code == .decodingFailed, "\(kind): \(error)")
                    #expect(error.store?.contains(url.lastPathComponent) == true)
                }
                #expect(try url.bytes() == data)
            }
        }
    }
}
