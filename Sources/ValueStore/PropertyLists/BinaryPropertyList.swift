import Foundation

/// Reads and writes binary property lists (`bplist00`), the format a settings file is written in.
///
/// Foundation's reader and writer go through Swift dictionaries of strings, which merge keys that
/// differ only in Unicode normalization, and its reader turns a keyed archiver's UID into an
/// object no property-list value can hold. This one keeps top-level keys byte for byte
/// (``PropertyListKey``) and a UID as it is (``PropertyListNode/uid(_:)``), and writes what
/// Foundation reads.
///
/// ```swift
/// let data = BinaryPropertyList.data(of: [PropertyListKey("theme"): .string("dark")])
/// let entries = try BinaryPropertyList.dictionary(from: data)
/// ```
enum BinaryPropertyList {
    /// The first eight bytes of every binary property list.
    static let magic = Array("bplist00".utf8)

    /// Whether `data` starts as a binary property list.
    static func isBinary(_ data: Data) -> Bool {
        data.starts(with: magic)
    }

    /// The entries of a binary property list whose top level is a dictionary.
    ///
    /// - Throws: ``ValueStoreError/Code/corrupted`` when the bytes are not a well-formed binary
    ///   property list, its top level is not a dictionary, or it holds an object a property list
    ///   value cannot be (a set, a null, an integer wider than 64 bits);
    ///   ``ValueStoreError/Code/unsupportedFormat`` when a key or string holds an unpaired UTF-16
    ///   surrogate, or a nested dictionary two keys that differ only in Unicode normalization,
    ///   which could not be kept exactly.
    static func dictionary(from data: Data) throws -> [PropertyListKey: PropertyListNode] {
        try data.withUnsafeBytes { bytes in
            var reader = try Reader(bytes)
            return try reader.topLevelDictionary()
        }
    }
}

// MARK: - Reading

extension BinaryPropertyList {
    private struct Reader {
        /// The whole property list, header to trailer.
        let bytes: UnsafeRawBufferPointer
        /// From the trailer: how many bytes each entry of the offset table takes.
        let offsetSize: Int
        /// From the trailer: how many bytes an object reference inside a container takes.
        let referenceSize: Int
        /// From the trailer: how many objects the offset table lists.
        let objectCount: Int
        /// From the trailer: the reference of the top-level object.
        let topObject: Int
        /// From the trailer: where the offset table starts.
        let tableOffset: Int
        /// Objects visited so far: a tree visits each reference once, and every reference takes
        /// a byte at least, so more visits than bytes means containers shared to blow up.
        var visits = 0
        /// Nesting deeper than this is refused, which also ends a container that holds itself;
        /// the reader recurses, and a secondary thread on Apple platforms has 512 KB of stack.
        static let maximumDepth = 100

        init(_ bytes: UnsafeRawBufferPointer) throws {
            self.bytes = bytes
            guard bytes.count >= magic.count + 32, bytes.starts(with: magic) else {
                throw Self.corrupted("it is too short to be a binary property list")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw Self.corrupted("its trailer gives invalid integer sizes")
            }
            let count = Self.bigEndian(bytes, at: trailer + 8, size: 8)
            let top = Self.bigEndian(bytes, at: trailer + 16, size: 8)
            let table = Self.bigEndian(bytes, at: trailer + 24, size: 8)
            guard count >= 1, count <= UInt64(bytes.count), top < count, table >= UInt64(magic.count),
                table <= UInt64(trailer), (UInt64(trailer) - table) / UInt64(offsetSize) >= count
            else {
                throw Self.corrupted("its trailer does not fit the file")
            }
            objectCount = Int(count)
            topObject = Int(top)
            tableOffset = Int(table)
        }

        mutating func topLevelDictionary() throws -> [PropertyListKey: PropertyListNode] {
            let offset = try offset(of: topObject)
            guard bytes[offset] >> 4 == 0xD else {
                throw ValueStoreError(.corrupted, reason: "the property list's top level is not a dictionary")
            }
            visits += 1
            let (count, start) = try countAndStart(at: offset, unit: 2 * referenceSize)
            var entries: [PropertyListKey: PropertyListNode] = [:]
            entries.reserveCapacity(count)
            for index in 0..<count {
                let key = try string(reference(at: start + index * referenceSize), depth: 1)
                do {
                    entries[PropertyListKey(key)] = try node(
                        reference(at: start + (count + index) * referenceSize), depth: 1)
                } catch let collision as NestedKeyCollision {
                    throw collision.refusal(under: key)
                }
            }
            return entries
        }

        /// The object numbered `index`.
        private mutating func node(_ index: Int, depth: Int) throws -> PropertyListNode {
            visits += 1
            guard visits <= bytes.count, depth < Self.maximumDepth else {
                throw Self.corrupted("its containers nest or repeat beyond any settings file's")
            }
            let offset = try offset(of: index)
            let marker = bytes[offset]
            let low = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0 where marker == 0x08: return .boolean(false)
            case 0x0 where marker == 0x09: return .boolean(true)
            case 0x1: return try integer(at: offset)
            case 0x2 where low == 2:
                return .real(Double(Float(bitPattern: UInt32(try field(at: offset + 1, size: 4)))))
            case 0x2 where low == 3: return .real(Double(bitPattern: try field(at: offset + 1, size: 8)))
            case 0x3 where low == 3:
                return .date(
                    Date(timeIntervalSinceReferenceDate: Double(bitPattern: try field(at: offset + 1, size: 8))))
            case 0x4:
                let (count, start) = try countAndStart(at: offset, unit: 1)
                return .data(Data(UnsafeRawBufferPointer(rebasing: bytes[start..<start + count])))
            case 0x5, 0x6: return .string(try string(index, depth: depth))
            case 0x8:
                try requireObjectBytes(offset + 1, count: low + 1)
                return .uid(Data(UnsafeRawBufferPointer(rebasing: bytes[offset + 1..<offset + 2 + low])))
            case 0xA:
                let (count, start) = try countAndStart(at: offset, unit: referenceSize)
                var nodes: [PropertyListNode] = []
                nodes.reserveCapacity(count)
                for element in 0..<count {
                    nodes.append(try node(reference(at: start + element * referenceSize), depth: depth + 1))
                }
                return .array(nodes)
            case 0xD:
                let (count, start) = try countAndStart(at: offset, unit: 2 * referenceSize)
                var nodes: [String: PropertyListNode] = [:]
                for entry in 0..<count {
                    let key = try string(reference(at: start + entry * referenceSize), depth: depth + 1)
                    try NestedKeyCollision.insert(
                        node(reference(at: start + (count + entry) * referenceSize), depth: depth + 1), for: key,
                        into: &nodes)
                }
                return .dictionary(nodes)
            default:
                throw Self.corrupted(
                    "it holds an object of kind 0x\(String(marker, radix: 16)), which no property-list value is")
            }
        }

        /// The string numbered `index`; any other object there is corruption.
        private mutating func string(_ index: Int, depth: Int) throws -> String {
            let offset = try offset(of: index)
            switch bytes[offset] >> 4 {
            case 0x5:
                let (count, start) = try countAndStart(at: offset, unit: 1)
                let characters = UnsafeRawBufferPointer(rebasing: bytes[start..<start + count])
                if !characters.contains(where: { $0 >= 0x80 }) {
                    return String(decoding: characters, as: UTF8.self)
                }
                // Not ASCII, though marked so: each byte is the scalar of the same number.
                var scalars = String.UnicodeScalarView()
                scalars.append(contentsOf: characters.map { Unicode.Scalar($0) })
                return String(scalars)
            case 0x6:
                let (count, start) = try countAndStart(at: offset, unit: 2)
                var units: [UInt16] = []
                units.reserveCapacity(count)
                for unit in 0..<count {
                    units.append(UInt16(bytes[start + 2 * unit]) << 8 | UInt16(bytes[start + 2 * unit + 1]))
                }
                try Self.requirePairedSurrogates(units)
                return String(decoding: units, as: UTF16.self)
            default:
                throw Self.corrupted("a dictionary key is not a string")
            }
        }

        /// Throws ``ValueStoreError/unpairedSurrogate(_:)`` unless every surrogate in `units` is
        /// half of a pair, so that decoding them repairs nothing.
        private static func requirePairedSurrogates(_ units: [UInt16]) throws {
            var index = 0
            while index < units.count {
                if UTF16.isLeadSurrogate(units[index]), index + 1 < units.count,
                    UTF16.isTrailSurrogate(units[index + 1])
                {
                    index += 2
                } else if UTF16.isLeadSurrogate(units[index]) || UTF16.isTrailSurrogate(units[index]) {
                    throw ValueStoreError.unpairedSurrogate(units[index])
                } else {
                    index += 1
                }
            }
        }

        private func integer(at offset: Int) throws -> PropertyListNode {
            let size = Int(bytes[offset] & 0x0F)
            switch size {
            case 0, 1, 2:
                return .integer(Int64(try field(at: offset + 1, size: 1 << size)))
            case 3:
                return .integer(Int64(bitPattern: try field(at: offset + 1, size: 8)))
            case 4:
                let high = try field(at: offset + 1, size: 8)
                let low = try field(at: offset + 9, size: 8)
                if high == 0 {
                    return .unsignedInteger(low)
                }
                if high == .max, Int64(bitPattern: low) < 0 {
                    return .integer(Int64(bitPattern: low))
                }
                throw Self.corrupted("it holds an integer wider than 64 bits")
            default:
                throw Self.corrupted("it holds an integer of \(1 << size) bytes")
            }
        }

        /// An object's count (from its marker, or the integer after it) and where its contents
        /// start, checked to fit before the offset table.
        private func countAndStart(at offset: Int, unit: Int) throws -> (count: Int, start: Int) {
            let low = Int(bytes[offset] & 0x0F)
            var count = low
            var start = offset + 1
            if low == 0x0F {
                try requireObjectBytes(offset + 1, count: 1)
                let marker = bytes[offset + 1]
                let size = 1 << Int(marker & 0x0F)
                guard marker >> 4 == 0x1, size <= 8 else {
                    throw Self.corrupted("an object's count is not an integer")
                }
                let value = try field(at: offset + 2, size: size)
                guard value <= UInt64(tableOffset) else {
                    throw Self.corrupted("an object's count runs past the file")
                }
                count = Int(value)
                start = offset + 2 + size
            }
            try requireObjectBytes(start, count: count * unit)
            return (count, start)
        }

        /// Where object `index` starts.
        private func offset(of index: Int) throws -> Int {
            guard index < objectCount else {
                throw Self.corrupted("it refers to an object it does not hold")
            }
            let offset = Self.bigEndian(bytes, at: tableOffset + index * offsetSize, size: offsetSize)
            guard offset >= UInt64(magic.count), offset < UInt64(tableOffset) else {
                throw Self.corrupted("an object's offset lies outside the objects")
            }
            return Int(offset)
        }

        private func reference(at position: Int) -> Int {
            // `countAndStart` checked that every reference fits.
            Int(clamping: Self.bigEndian(bytes, at: position, size: referenceSize))
        }

        /// `size` bytes at `position` as a big-endian integer, checked to fit.
        private func field(at position: Int, size: Int) throws -> UInt64 {
            try requireObjectBytes(position, count: size)
            return Self.bigEndian(bytes, at: position, size: size)
        }

        private func requireObjectBytes(_ start: Int, count: Int) throws {
            guard count >= 0, start <= tableOffset, count <= tableOffset - start else {
                throw Self.corrupted("an object runs past the objects")
            }
        }

        private static func bigEndian(_ bytes: UnsafeRawBufferPointer, at position: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in bytes[position..<position + size] {
                value = value << 8 | UInt64(byte)
            }
            return value
        }

        private static func corrupted(_ what: String) -> ValueStoreError {
            ValueStoreError(
                .corrupted, reason: "the file is not a valid binary property list: \(what); nothing was changed")
        }
    }
}
