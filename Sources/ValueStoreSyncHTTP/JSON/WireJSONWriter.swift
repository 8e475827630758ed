import Foundation

/// Writes the v1 wire's JSON directly into bytes: the same keys and values the wire types'
/// `Codable` conformances give `JSONEncoder`, for the two bodies a push sends (its request and its
/// answer), without the encoder's containers, which took most of a 500-change push's time above
/// the sync table's own (see Performance.md).
///
/// The keys are the `Codable` conformances' keys, written in their declaration order (the order
/// of `JSONEncoder`'s objects is not fixed), and `nil` optionals are left out, as `JSONEncoder`
/// leaves them; text is written as UTF-8 with only what JSON requires escaped, so `/` is not
/// `\/`. Any JSON decoder reads the bytes to the same values, which `WireJSONTests` checks
/// against `JSONDecoder` for every shape of the wire.
///
/// ```swift
/// var writer = WireJSONWriter()
/// writer.object { writer in
///     writer.field("account", "user-42")
/// }
/// let body = writer.data   // {"account":"user-42"}
/// ```
struct WireJSONWriter {
    private var bytes: [UInt8] = []
    /// Whether the next value or key needs a comma before it.
    private var needsComma = false

    /// What has been written.
    var data: Data { Data(bytes) }

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// An object, whose fields `body` writes.
    mutating func object(_ body: (inout WireJSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// An array of `elements`, each written by `element`.
    mutating func array<Element>(_ elements: [Element], _ element: (inout WireJSONWriter, Element) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for each in elements {
            element(&self, each)
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A field's key; its value comes next.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        // The value follows the colon with no comma.
        needsComma = false
    }

    /// Text, with quotes, backslashes and control characters escaped.
    mutating func string(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: utf8[start..<index])
                appendEscape(of: byte)
                start = index + 1
            }
            bytes.append(contentsOf: utf8[start...])
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A whole number, in decimal.
    mutating func integer(_ number: some FixedWidthInteger) {
        separate()
        bytes.append(contentsOf: number.description.utf8)
        needsComma = true
    }

    /// `true` or `false`.
    mutating func bool(_ flag: Bool) {
        separate()
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        needsComma = true
    }

    /// Bytes as Base64 text, as `JSONEncoder`'s default data strategy writes them.
    mutating func base64(_ data: Data) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: data.base64EncodedData())
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A key and its text.
    mutating func field(_ name: StaticString, _ text: String) {
        key(name)
        string(text)
    }

    /// A key and its whole number.
    mutating func field(_ name: StaticString, _ number: some FixedWidthInteger) {
        key(name)
        integer(number)
    }

    private mutating func separate() {
        if needsComma {
            bytes.append(UInt8(ascii: ","))
        }
    }

    private mutating func appendEscape(of byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, Self.hex(byte >> 4), Self.hex(byte & 0x0F)])
        }
    }

    /// The lowercase hexadecimal digit of `nibble`.
    private static func hex(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
