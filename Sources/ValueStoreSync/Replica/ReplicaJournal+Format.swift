import Foundation
import ValueStore

// The journal's format, read and written: see ``ReplicaJournal``.
extension ReplicaJournal {
    // MARK: Reading

    struct Read {
        /// The whole entries, merged in order.
        var changes = ReplicaFiles.Changes()
        /// The end of the last whole entry.
        var length = 0
        var generation: UInt64 = 0
    }

    /// The whole entries of `contents` from byte `start` (the first entry by default), merged,
    /// and where they end.
    static func entries(in contents: [UInt8], path: String, from start: Int = 0) throws -> Read {
        var read = Read()
        guard !contents.isEmpty else { return read }
        if contents.count < headerSize || Array(contents.prefix(magic.count)) != magic {
            // The first append, cut short: what is there of the magic is the magic or zeros, and
            // without a whole header no entry can be read.
            let isTorn = contents.prefix(magic.count).enumerated().allSatisfy { $1 == 0 || $1 == magic[$0] }
            if isTorn {
                return read
            }
            if Array(contents.prefix(magic.count - 1)) == Array(magic.prefix(magic.count - 1)) {
                throw ValueStoreError(
                    .newerVersion, store: "sync journal '\(path)'",
                    reason: "the journal's format is newer than this version reads")
            }
            throw corrupted(path, "has no journal header")
        }
        read.generation = littleEndian(contents[magic.count..<headerSize], as: UInt64.self)
        var offset = max(start, headerSize)
        read.length = offset
        while offset < contents.count {
            guard let (payload, end) = entry(in: contents, at: offset, generation: read.generation) else {
                // Not a whole entry: an incomplete last append, unless a whole entry follows.
                if (offset + 1..<contents.count).contains(where: {
                    entry(in: contents, at: $0, generation: read.generation) != nil
                }) {
                    throw corrupted(path, "has a broken entry at byte \(offset), with whole entries after it")
                }
                return read
            }
            do {
                read.changes.merge(try JSONDecoder().decode(ReplicaFiles.Changes.self, from: Data(payload)))
            } catch {
                throw ValueStoreError(
                    .decodingFailed, store: "sync journal '\(path)'",
                    reason: "the entry at byte \(offset) is whole but is not a commit this version reads",
                    underlyingError: error)
            }
            offset = end
            read.length = end
        }
        return read
    }

    /// The payload of a whole entry at `offset`, and where the entry ends; `nil` when the bytes
    /// there are not one.
    static func entry(
        in contents: [UInt8],
        at offset: Int,
        generation: UInt64
    ) -> (ArraySlice<UInt8>, Int)? {
        guard contents.count - offset >= entryHeaderSize,
            contents[offset..<offset + 4].elementsEqual(entryMark)
        else { return nil }
        let length = Int(littleEndian(contents[offset + 4..<offset + 8], as: UInt32.self))
        let end = offset + entryHeaderSize + length
        guard end <= contents.count else { return nil }
        let payload = contents[offset + entryHeaderSize..<end]
        guard
            digest(of: payload, generation: generation)
                == littleEndian(contents[offset + 8..<offset + 16], as: UInt64.self)
        else { return nil }
        return (payload, end)
    }

    /// An entry's digest: FNV-1a 64 of the journal's generation and the payload.
    static func digest(of payload: some Sequence<UInt8>, generation: UInt64) -> UInt64 {
        var digest = FNV1a()
        withUnsafeBytes(of: generation.littleEndian) { digest.mix($0) }
        digest.mix(payload)
        return digest.value
    }

    static func corrupted(_ path: String, _ what: String) -> ValueStoreError {
        ValueStoreError(.corrupted, store: "sync journal '\(path)'", reason: "the journal \(what)")
    }

    static func appendLittleEndian<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    static func littleEndian<Integer: FixedWidthInteger>(
        _ bytes: ArraySlice<UInt8>,
        as type: Integer.Type
    ) -> Integer {
        bytes.reversed().reduce(Integer.zero) { ($0 << 8) | Integer($1) }
    }
}
