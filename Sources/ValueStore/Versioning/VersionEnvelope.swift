import Foundation

/// The JSON envelope that stores a version beside a value: `{"version":N,"value":V}`.
///
/// Writing splices bytes: `{"version":`, the version in decimal, `,"value":`, the value as a
/// `JSONEncoder` with `.sortedKeys` encodes it, and `}`. The version comes first, so a person
/// reading the file sees it at once (sorted, "value" would come first); the value's keys are
/// sorted so that the same value always makes the same bytes, which `JSONEncoder` does not
/// promise otherwise.
///
/// Reading parses the data once. Data in exactly the written form gives its version from its first
/// bytes, and only the value's bytes are decoded, as that version's type. Any other form is parsed
/// whole: ``Decoded`` reads the version, picks the type from the chain the decoder carries in its
/// `userInfo`, and decodes the value as that type.
struct VersionEnvelope<Current: VersionedValue>: Sendable {
    let chain: VersionChain<Current>
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder
    private let prefix: Data

    init(legacyVersion: Int?) {
        chain = VersionChain(legacyVersion: legacyVersion)
        encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        decoder = JSONDecoder()
        decoder.userInfo[chainKey] = chain
        prefix = Data(#"{"version":\#(Current.version),"value":"#.utf8)
    }

    /// The stored bytes of a value.
    func encode(_ value: Current) throws -> Data {
        if let problem = chain.problem {
            throw ValueStoreError(.invalidConfiguration, reason: problem)
        }
        let encoded: Data
        do {
            encoded = try encoder.encode(value)
        } catch {
            throw ValueStoreError(encoding: error, as: "JSON")
        }
        var data = Data(capacity: prefix.count + encoded.count + 1)
        data.append(prefix)
        data.append(encoded)
        data.append(UInt8(ascii: "}"))
        return data
    }

    /// The current value, decoded from what any version of the chain stored and migrated.
    ///
    /// Data in exactly the written form is read without parsing the envelope: its version picks
    /// the type, and the value's bytes are decoded as it. Anything else, and value bytes that
    /// fail to decode, go through a full parse of the envelope.
    func decode(_ data: Data) throws -> Current {
        do {
            if chain.problem == nil, let (version, value) = Self.written(data),
                let current = try chain.step(for: version).decodeValueBytes(data[value], decoder)
            {
                return current
            }
            try Data.requireContent(data, format: "JSON")
            return try decoder.decode(Decoded.self, from: data).value
        } catch {
            throw ValueStoreError(decoding: error, as: "JSON")
        }
    }

    /// Throws ``ValueStoreError/Code/newerVersion`` when `data` is an envelope of a version above
    /// the current one, before a write replaces it.
    ///
    /// The written form gives its version from its first bytes, so a save over a large file does
    /// not parse it. Data that is not a readable envelope (damaged, or saved before versioning)
    /// does not stop a write: as with any store, a save replaces bytes the app cannot read.
    func refuseNewer(_ data: Data, doing operation: String) throws {
        let version: Int?
        if let written = Self.written(data) {
            version = written.version
        } else {
            do {
                version = try decoder.decode(Header.self, from: data).version
            } catch {
                return  // not JSON at all: nothing that a newer app could have written
            }
        }
        if let version, version > Current.version {
            throw ValueStoreError(
                .newerVersion,
                reason:
                    "stored by schema \(version); this app reads up to \(Current.version), so it does not \(operation) it"
            )
        }
    }

    /// The version and the range of the value's bytes in data that has exactly the form this
    /// library writes: `{"version":`, an integer without leading zeros, `,"value":`, at least one
    /// byte, and `}` as the last byte. `nil` for anything else.
    static func written(_ data: Data) -> (version: Int, value: Range<Data.Index>)? {
        let head = Array(#"{"version":"#.utf8)
        let separator = Array(#","value":"#.utf8)
        return data.withUnsafeBytes { bytes -> (Int, Range<Int>)? in
            guard bytes.count > head.count + separator.count + 2, bytes.starts(with: head),
                bytes[bytes.count - 1] == UInt8(ascii: "}")
            else { return nil }
            var index = head.count
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let digits = index
            var magnitude = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]),
                index - digits < 18
            {
                magnitude = magnitude * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            let length = index - digits
            guard length > 0, length == 1 || bytes[digits] != UInt8(ascii: "0"),
                bytes[index...].starts(with: separator)
            else { return nil }
            let start = index + separator.count
            let end = bytes.count - 1
            guard start < end else { return nil }
            return (negative ? -magnitude : magnitude, start..<end)
        }
        .map { version, range in
            (version, (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound))
        }
    }

    /// The current value of any stored version.
    struct Decoded: Decodable {
        let value: Current

        init(from decoder: any Decoder) throws {
            guard let chain = decoder.userInfo[chainKey] as? VersionChain<Current> else {
                throw ValueStoreError(.invalidConfiguration, reason: "the decoder carries no version chain")
            }
            if let problem = chain.problem {
                throw ValueStoreError(.invalidConfiguration, reason: problem)
            }
            if let envelope = Header.envelope(in: decoder) {
                value = try chain.step(for: envelope.version).decodeValue(envelope.container)
            } else if let legacyVersion = chain.legacyVersion {
                value = try chain.step(for: legacyVersion).decodeBare(decoder)
            } else {
                throw ValueStoreError(
                    .corrupted,
                    reason: #"the data has no version envelope ({"version":…,"value":…}); "#
                        + "pass legacyVersion to read data saved before versioning"
                )
            }
        }
    }

    /// The version of an envelope, read without decoding its value.
    struct Header: Decodable {
        let version: Int?

        init(from decoder: any Decoder) throws {
            version = Self.envelope(in: decoder)?.version
        }

        /// The top level's keyed container and version when it is an envelope: an object with
        /// an integer `version` and a `value`. Anything else is bare data.
        static func envelope(in decoder: any Decoder) -> (container: KeyedDecodingContainer<EnvelopeKey>, version: Int)?
        {
            // Each probe asks about the shape of the data; a mismatch means "not an envelope",
            // which the caller handles, so no failure is hidden here.
            guard let container = try? decoder.container(keyedBy: EnvelopeKey.self),
                container.contains(.value),
                let version = try? container.decode(Int.self, forKey: .version)
            else { return nil }
            return (container, version)
        }
    }
}

/// Where ``VersionEnvelope/Decoded`` finds the chain in the decoder's `userInfo`.
private let chainKey = CodingUserInfoKey(rawValue: "ValueStore.VersionChain")!
