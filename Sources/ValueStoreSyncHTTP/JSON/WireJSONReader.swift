import Foundation

/// Reads the v1 wire's JSON straight from its bytes, for the bodies a push sends: the fast path
/// beside `JSONDecoder`, never instead of it.
///
/// It reads what `JSONEncoder` and ``WireJSONWriter`` write, in any key order and with any white
/// space (and `null` for an absent optional, and any `\uXXXX` escape, as `JSONDecoder` reads
/// them), and gives up with ``Unread`` on everything else: an unknown or repeated key, a missing
/// one, a number with a fraction or an exponent, invalid text or Base64, trailing bytes. The
/// caller then decodes the same bytes with `JSONDecoder`, whose answer (a value or its error) is
/// the one that counts, so this reader can only be faster, never different: `WireJSONTests`
/// checks that whatever it reads, `JSONDecoder` reads to the same value.
///
/// ```swift
/// let account = try WireJSONReader.read(Data(#"{"account":"user-42"}"#.utf8)) { reader in
///     var account: String?
///     try reader.object { reader, key in
///         guard key == "account" else { throw WireJSONReader.Unread() }
///         try reader.assign(&account) { try $0.string() }
///     }
///     return try WireJSONReader.required(account)
/// }
/// ```
struct WireJSONReader {
    /// What the fast path does not read; `JSONDecoder` reads it instead.
    struct Unread: Error {}

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Reads `data` with `body`, which must take the one top-level value and leave only white
    /// space after it.
    static func read<Value>(_ data: Data, _ body: (inout WireJSONReader) throws -> Value) throws -> Value {
        try data.withUnsafeBytes { bytes in
            var reader = WireJSONReader(bytes: bytes)
            let value = try body(&reader)
            reader.skipWhitespace()
            guard reader.index == bytes.count else { throw Unread() }
            return value
        }
    }

    /// The value of a field that must be there.
    static func required<Value>(_ value: Value?) throws -> Value {
        guard let value else { throw Unread() }
        return value
    }

    /// Reads a field's value into `slot`, which a repeated key finds already set.
    mutating func assign<Value>(_ slot: inout Value?, _ read: (inout WireJSONReader) throws -> Value) throws {
        guard slot == nil else { throw Unread() }
        slot = try read(&self)
    }

    /// An object: `field` reads the value of each key, and throws ``Unread`` for a key it does not
    /// know.
    mutating func object(_ field: (inout WireJSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            let key = try plainKey()
            try expect(UInt8(ascii: ":"))
            try field(&self, key)
            skipWhitespace()
            switch take() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw Unread()
            }
        }
    }

    /// An array, each of whose elements `element` reads.
    mutating func array<Element>(_ element: (inout WireJSONReader) throws -> Element) throws -> [Element] {
        try expect(UInt8(ascii: "["))
        skipWhitespace()
        var elements: [Element] = []
        if peek() == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try element(&self))
            skipWhitespace()
            switch take() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return elements
            default: throw Unread()
            }
        }
    }

    /// `nil` for `null`, else the value `read` reads.
    mutating func optional<Value>(_ read: (inout WireJSONReader) throws -> Value) throws -> Value? {
        skipWhitespace()
        guard !consume("null") else { return nil }
        return try read(&self)
    }

    /// A whole number in plain decimal that fits `Number`.
    mutating func integer<Number: FixedWidthInteger>(_: Number.Type = Number.self) throws -> Number {
        skipWhitespace()
        let negative = peek() == UInt8(ascii: "-")
        if negative {
            index += 1
        }
        let start = index
        var number: Number = 0
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let digit = Number(byte - UInt8(ascii: "0"))
            let (tens, overflowedTens) = number.multipliedReportingOverflow(by: 10)
            let (next, overflowed) =
                negative ? tens.subtractingReportingOverflow(digit) : tens.addingReportingOverflow(digit)
            guard !overflowedTens, !overflowed else { throw Unread() }
            number = next
            index += 1
        }
        // No digits, a leading zero, a minus zero or a minus on a number that cannot have one, a
        // fraction or an exponent: JSONDecoder's to judge.
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { throw Unread() }
        guard !negative || (Number.isSigned && number != 0) else { throw Unread() }
        if let byte = peek(), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            throw Unread()
        }
        return number
    }

    /// `true` or `false`.
    mutating func bool() throws -> Bool {
        skipWhitespace()
        if consume("true") { return true }
        if consume("false") { return false }
        throw Unread()
    }

    /// Text.
    mutating func string() throws -> String {
        let (raw, escaped) = try stringBytes()
        if escaped {
            return try unescaped(raw)
        }
        return try Self.text(raw)
    }

    /// Bytes from Base64 text, as `JSONDecoder`'s default data strategy reads them. `JSONEncoder`
    /// writes each `/` of the text as `\/`; those are read without going through text.
    mutating func base64() throws -> Data {
        let (raw, escaped) = try stringBytes()
        guard escaped else {
            guard let decoded = Data(base64Encoded: Data(raw)) else { throw Unread() }
            return decoded
        }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(raw.count)
        var position = 0
        while position < raw.count {
            if raw[position] == UInt8(ascii: "\\") {
                // Base64 has no other character JSON escapes; any other escape is not Base64.
                guard position + 1 < raw.count, raw[position + 1] == UInt8(ascii: "/") else { throw Unread() }
                position += 1
            }
            unescaped.append(raw[position])
            position += 1
        }
        let decoded = Data(base64Encoded: Data(unescaped))
        guard let decoded else { throw Unread() }
        return decoded
    }

    /// A UUID from its text.
    mutating func uuid() throws -> UUID {
        guard let uuid = UUID(uuidString: try string()) else { throw Unread() }
        return uuid
    }

    // MARK: - Bytes

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func take() -> UInt8? {
        defer { index += 1 }
        return peek()
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            index += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard take() == byte else { throw Unread() }
    }

    /// Takes `literal` if it comes next.
    private mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        if matches {
            index += count
        }
        return matches
    }

    /// Text from UTF-8 as `JSONDecoder` makes it: every character kept, a byte order mark too
    /// (Foundation's `String(bytes:encoding:)` drops one at the start); invalid UTF-8 is
    /// `JSONDecoder`'s to judge.
    private static func text(_ utf8: UnsafeRawBufferPointer) throws -> String {
        if !utf8.contains(where: { $0 >= 0x80 }) {
            return String(decoding: utf8, as: UTF8.self)
        }
        guard let text = String(validating: utf8, as: UTF8.self) else { throw Unread() }
        return text
    }

    /// A key, which the wire's keys never escape.
    private mutating func plainKey() throws -> String {
        let (raw, escaped) = try stringBytes()
        guard !escaped else { throw Unread() }
        return String(decoding: raw, as: UTF8.self)
    }

    /// The bytes between a string's quotes, and whether any is escaped; a raw control character
    /// is not JSON.
    private mutating func stringBytes() throws -> (UnsafeRawBufferPointer, escaped: Bool) {
        try expect(UInt8(ascii: "\""))
        let start = index
        var escaped = false
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return (UnsafeRawBufferPointer(rebasing: bytes[start..<index - 1]), escaped)
            case UInt8(ascii: "\\"):
                escaped = true
                index += 2
            case 0..<0x20:
                throw Unread()
            default:
                index += 1
            }
        }
        throw Unread()
    }

    /// Text whose escapes are undone: the two-character ones and `\uXXXX`, a surrogate pair as
    /// one character.
    private func unescaped(_ raw: UnsafeRawBufferPointer) throws -> String {
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        var position = 0
        func flush() throws {
            guard !utf8.isEmpty else { return }
            scalars.append(contentsOf: try utf8.withUnsafeBytes { try Self.text($0) }.unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        func hex4(at offset: Int) throws -> UInt32 {
            guard offset + 4 <= raw.count else { throw Unread() }
            var value: UInt32 = 0
            for byte in raw[offset..<offset + 4] {
                guard let digit = Character(UnicodeScalar(byte)).hexDigitValue else { throw Unread() }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while position < raw.count {
            let byte = raw[position]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                position += 1
                continue
            }
            guard position + 1 < raw.count else { throw Unread() }
            let simple: UInt8? =
                switch raw[position + 1] {
                case UInt8(ascii: "\""): 0x22
                case UInt8(ascii: "\\"): 0x5C
                case UInt8(ascii: "/"): 0x2F
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                default: nil
                }
            if let simple {
                utf8.append(simple)
                position += 2
                continue
            }
            guard raw[position + 1] == UInt8(ascii: "u") else { throw Unread() }
            var code = try hex4(at: position + 2)
            position += 6
            if (0xD800..<0xDC00).contains(code) {
                // A high surrogate: only with its low one is it a character.
                guard position + 1 < raw.count, raw[position] == UInt8(ascii: "\\"),
                    raw[position + 1] == UInt8(ascii: "u")
                else { throw Unread() }
                let low = try hex4(at: position + 2)
                guard (0xDC00..<0xE000).contains(low) else { throw Unread() }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                position += 6
            }
            guard let scalar = UnicodeScalar(code) else { throw Unread() }
            try flush()
            scalars.append(scalar)
        }
        try flush()
        return String(scalars)
    }
}
