import Foundation

/// Writing: the objects, each once, then the offset table and the trailer, as Foundation writes
/// them, so that Foundation reads back what a settings file writes.
extension PropertyListNode {
    /// How many objects the node takes in a binary property list.
    fileprivate var objectCount: Int {
        switch self {
        case .array(let nodes): nodes.reduce(1) { $0 + $1.objectCount }
        case .dictionary(let nodes): nodes.values.reduce(1 + nodes.count) { $0 + $1.objectCount }
        default: 1
        }
    }
}

extension BinaryPropertyList {
    /// A binary property list whose top level is a dictionary of `entries`.
    static func data(of entries: [PropertyListKey: PropertyListNode]) -> Data {
        var writer = Writer(objectCount: 1 + entries.count + entries.values.reduce(0) { $0 + $1.objectCount })
        var keys: [Int] = []
        var values: [Int] = []
        keys.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        for (key, value) in entries {
            keys.append(writer.write(.string(key.name)))
            values.append(writer.write(value))
        }
        let top = writer.writeContainer(marker: 0xD0, count: entries.count, references: keys + values)
        return writer.finish(top: top)
    }

    private struct Writer {
        var output: [UInt8] = magic
        var offsets: [Int] = []
        let referenceSize: Int

        init(objectCount: Int) {
            referenceSize = Self.byteCount(of: UInt64(objectCount))
            offsets.reserveCapacity(objectCount)
        }

        /// Writes `node` and its children, and returns its object number.
        mutating func write(_ node: PropertyListNode) -> Int {
            switch node {
            case .array(let nodes):
                let references = nodes.map { write($0) }
                return writeContainer(marker: 0xA0, count: nodes.count, references: references)
            case .dictionary(let nodes):
                var keys: [Int] = []
                var values: [Int] = []
                for (key, value) in nodes {
                    keys.append(write(.string(key)))
                    values.append(write(value))
                }
                return writeContainer(marker: 0xD0, count: nodes.count, references: keys + values)
            default:
                let number = startObject()
                writeScalar(node)
                return number
            }
        }

        mutating func writeContainer(marker: UInt8, count: Int, references: [Int]) -> Int {
            let number = startObject()
            writeHeader(marker, count: count)
            for reference in references {
                append(UInt64(reference), size: referenceSize)
            }
            return number
        }

        private mutating func startObject() -> Int {
            offsets.append(output.count)
            return offsets.count - 1
        }

        private mutating func writeScalar(_ node: PropertyListNode) {
            switch node {
            case .boolean(let value):
                output.append(value ? 0x09 : 0x08)
            case .integer(let value):
                writeInteger(value)
            case .unsignedInteger(let value):
                if let value = Int64(exactly: value) {
                    writeInteger(value)
                } else {
                    output.append(0x14)
                    append(0, size: 8)
                    append(value, size: 8)
                }
            case .real(let value):
                output.append(0x23)
                append(value.bitPattern, size: 8)
            case .date(let value):
                output.append(0x33)
                append(value.timeIntervalSinceReferenceDate.bitPattern, size: 8)
            case .data(let value):
                writeHeader(0x40, count: value.count)
                output.append(contentsOf: value)
            case .string(let value):
                if value.utf8.allSatisfy({ $0 < 0x80 }) {
                    writeHeader(0x50, count: value.utf8.count)
                    output.append(contentsOf: value.utf8)
                } else {
                    let units = Array(value.utf16)
                    writeHeader(0x60, count: units.count)
                    for unit in units {
                        output.append(UInt8(unit >> 8))
                        output.append(UInt8(unit & 0xFF))
                    }
                }
            case .uid(let bytes):
                output.append(0x80 | UInt8(bytes.count - 1))
                output.append(contentsOf: bytes)
            case .array, .dictionary:
                preconditionFailure("containers are written by write(_:)")
            }
        }

        /// An integer as the smallest of 1, 2 or 4 unsigned bytes, or 8 signed ones, as
        /// Foundation writes it.
        private mutating func writeInteger(_ value: Int64) {
            guard value >= 0 else {
                output.append(0x13)
                append(UInt64(bitPattern: value), size: 8)
                return
            }
            let size = Self.byteCount(of: UInt64(value))
            output.append(0x10 | UInt8(size.trailingZeroBitCount))
            append(UInt64(value), size: size)
        }

        /// A marker with its count: in the marker when below 15, else in an integer after it.
        private mutating func writeHeader(_ marker: UInt8, count: Int) {
            if count < 15 {
                output.append(marker | UInt8(count))
            } else {
                output.append(marker | 0x0F)
                writeInteger(Int64(count))
            }
        }

        private mutating func append(_ value: UInt64, size: Int) {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }

        /// The offset table and the trailer, after the objects; `top` is the top object.
        mutating func finish(top: Int) -> Data {
            let tableOffset = output.count
            let offsetSize = Self.byteCount(of: UInt64(tableOffset))
            output.reserveCapacity(output.count + offsets.count * offsetSize + 32)
            for offset in offsets {
                append(UInt64(offset), size: offsetSize)
            }
            output.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)])
            append(UInt64(offsets.count), size: 8)
            append(UInt64(top), size: 8)
            append(UInt64(tableOffset), size: 8)
            return Data(output)
        }

        /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
        private static func byteCount(of value: UInt64) -> Int {
            switch value {
            case ...0xFF: 1
            case ...0xFFFF: 2
            case ...0xFFFF_FFFF: 4
            default: 8
            }
        }
    }
}
