import Foundation

/// Reads XML property lists (UTF-8), the format earlier releases wrote and the one people convert
/// a settings file to, to edit it by hand.
///
/// Foundation's reader goes through Swift dictionaries of strings, which merge keys that differ
/// only in Unicode normalization (`"caf\u{e9}"` and `"cafe\u{301}"`) before anyone can see both.
/// This one keeps top-level keys byte for byte (``PropertyListKey``), as ``BinaryPropertyList``
/// does, and refuses what it cannot keep exactly rather than repair it.
///
/// ```swift
/// let entries = try XMLPropertyList.dictionary(from: Data(contentsOf: url))
/// ```
enum XMLPropertyList {
    /// Whether `data` starts as XML: a `<` after an optional byte-order mark and white space.
    static func isXML(_ data: Data) -> Bool {
        let bytes = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        return bytes.first { !Reader.isSpace($0) } == UInt8(ascii: "<")
    }

    /// The entries of an XML property list whose top level is a dictionary.
    ///
    /// - Throws: ``ValueStoreError/Code/corrupted`` when the bytes are not a well-formed XML
    ///   property list, or its top level is not a dictionary;
    ///   ``ValueStoreError/Code/unsupportedFormat`` when it is written in an encoding other than
    ///   UTF-8, a key or string holds a UTF-16 surrogate, or a nested dictionary holds two keys
    ///   that differ only in Unicode normalization: nothing this library could keep exactly.
    static func dictionary(from data: Data) throws -> [PropertyListKey: PropertyListNode] {
        var reader = Reader(bytes: Array(data))
        return try reader.document()
    }
}

extension XMLPropertyList {
    fileprivate struct Reader {
        let bytes: [UInt8]
        var position = 0
        /// Nesting deeper than this is refused, as ``BinaryPropertyList`` does: the reader recurses.
        static let maximumDepth = 100

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
                position = 3
            }
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        // MARK: The document

        mutating func document() throws -> [PropertyListKey: PropertyListNode] {
            try skipMisc()
            var tag = try openTag()
            if tag.name == "plist" {
                guard !tag.isEmpty else { throw Self.corrupted("its plist element is empty") }
                try skipMisc()
                tag = try openTag()
            }
            guard tag.name == "dict" else {
                throw ValueStoreError(.corrupted, reason: "the property list's top level is not a dictionary")
            }
            var entries: [PropertyListKey: PropertyListNode] = [:]
            if !tag.isEmpty {
                while let key = try nextKey(closing: "dict") {
                    do {
                        entries[PropertyListKey(key)] = try value(depth: 1)
                    } catch let collision as NestedKeyCollision {
                        throw collision.refusal(under: key)
                    }
                }
            }
            try skipMisc()
            if position < bytes.count, try closingTag(named: "plist") {
                try skipMisc()
            }
            guard position == bytes.count else { throw Self.corrupted("something follows its top-level dictionary") }
            return entries
        }

        /// The next value element and its contents.
        private mutating func value(depth: Int) throws -> PropertyListNode {
            guard depth < Self.maximumDepth else { throw Self.corrupted("its containers nest too deep") }
            try skipMisc()
            let tag = try openTag()
            switch tag.name {
            case "dict":
                var nodes: [String: PropertyListNode] = [:]
                if !tag.isEmpty {
                    while let key = try nextKey(closing: "dict") {
                        try NestedKeyCollision.insert(value(depth: depth + 1), for: key, into: &nodes)
                    }
                }
                return .dictionary(nodes)
            case "array":
                var nodes: [PropertyListNode] = []
                if !tag.isEmpty {
                    try skipMisc()
                    while try !closingTag(named: "array") {
                        nodes.append(try value(depth: depth + 1))
                        try skipMisc()
                    }
                }
                return .array(nodes)
            case "true", "false":
                if !tag.isEmpty {
                    try skipMisc()
                    guard try closingTag(named: tag.name) else { throw Self.corrupted("<\(tag.name)> holds something") }
                }
                return .boolean(tag.name == "true")
            case "string":
                return .string(tag.isEmpty ? "" : try text(closing: "string"))
            case "data":
                let encoded = tag.isEmpty ? "" : try text(closing: "data")
                guard let data = Data(base64Encoded: encoded.filter { !$0.isWhitespace }) else {
                    throw Self.corrupted("a <data> element is not Base64")
                }
                return .data(data)
            case "integer":
                return try Self.integer(tag.isEmpty ? "" : text(closing: "integer"))
            case "real":
                return try Self.real(tag.isEmpty ? "" : text(closing: "real"))
            case "date":
                return .date(try Self.date(tag.isEmpty ? "" : text(closing: "date")))
            default:
                throw Self.corrupted("it holds a <\(tag.name)> element, which no property-list value is")
            }
        }

        /// The next key of a dictionary, or `nil` at the dictionary's closing tag.
        private mutating func nextKey(closing container: String) throws -> String? {
            try skipMisc()
            if try closingTag(named: container) { return nil }
            let tag = try openTag()
            guard tag.name == "key" else {
                throw Self.corrupted("a dictionary holds a <\(tag.name)> where a key belongs")
            }
            return tag.isEmpty ? "" : try text(closing: "key")
        }

        // MARK: Markup

        /// An opening tag (`<name attributes>` or `<name/>`), its attributes skipped.
        private mutating func openTag() throws -> (name: String, isEmpty: Bool) {
            guard peek("<"), position + 1 < bytes.count, bytes[position + 1] != UInt8(ascii: "/") else {
                throw Self.corrupted("an element is missing where one belongs")
            }
            position += 1
            let name = self.name()
            var quote: UInt8?
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: ">") {
                    return (name, bytes[position - 2] == UInt8(ascii: "/"))
                }
            }
            throw Self.corrupted("the tag <\(name)> never ends")
        }

        /// Consumes `</name>` when it comes next; `false` when another tag or text does.
        private mutating func closingTag(named expected: String) throws -> Bool {
            guard peek("</") else { return false }
            position += 2
            let name = self.name()
            guard name == expected else { throw Self.corrupted("</\(name)> closes <\(expected)>") }
            skipSpaces()
            guard peek(">") else { throw Self.corrupted("the tag </\(name)> never ends") }
            position += 1
            return true
        }

        private mutating func name() -> String {
            let start = position
            while position < bytes.count, !Self.isSpace(bytes[position]),
                ![UInt8(ascii: ">"), UInt8(ascii: "/")].contains(bytes[position])
            {
                position += 1
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// Skips white space, comments, processing instructions and a document type declaration;
        /// an XML declaration must name UTF-8, if it names an encoding.
        private mutating func skipMisc() throws {
            while true {
                skipSpaces()
                if peek("<!--") {
                    try skip(past: "-->")
                } else if peek("<?") {
                    let start = position
                    try skip(past: "?>")
                    try Self.requireUTF8(declaration: bytes[start..<position])
                } else if peek("<!DOCTYPE") {
                    var brackets = 0
                    while position < bytes.count, bytes[position] != UInt8(ascii: ">") || brackets > 0 {
                        if bytes[position] == UInt8(ascii: "[") { brackets += 1 }
                        if bytes[position] == UInt8(ascii: "]") { brackets -= 1 }
                        position += 1
                    }
                    try skip(past: ">")
                } else {
                    return
                }
            }
        }

        private mutating func skipSpaces() {
            while position < bytes.count, Self.isSpace(bytes[position]) {
                position += 1
            }
        }

        private mutating func skip(past end: String) throws {
            let end = Array(end.utf8)
            while position < bytes.count {
                if bytes[position...].starts(with: end) {
                    position += end.count
                    return
                }
                position += 1
            }
            throw Self.corrupted("it ends inside markup")
        }

        private func peek(_ prefix: String) -> Bool {
            bytes[position...].starts(with: prefix.utf8)
        }

        // MARK: Text

        /// The text up to `</name>`: entities and character references replaced, CDATA sections
        /// taken as they are, comments left out; checked to be UTF-8 that holds no surrogate.
        private mutating func text(closing name: String) throws -> String {
            var text: [UInt8] = []
            while true {
                guard position < bytes.count else { throw Self.corrupted("it ends inside <\(name)>") }
                let byte = bytes[position]
                if byte == UInt8(ascii: "&") {
                    try appendReference(to: &text)
                } else if byte != UInt8(ascii: "<") {
                    text.append(byte)
                    position += 1
                } else if peek("<![CDATA[") {
                    position += 9
                    let start = position
                    try skip(past: "]]>")
                    text += bytes[start..<position - 3]
                } else if peek("<!--") {
                    try skip(past: "-->")
                } else if try closingTag(named: name) {
                    return try Self.string(text)
                } else {
                    throw Self.corrupted("<\(name)> holds an element")
                }
            }
        }

        /// Appends what the entity or character reference at the position stands for.
        private mutating func appendReference(to text: inout [UInt8]) throws {
            guard let semicolon = bytes[position...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw Self.corrupted("an & begins no entity")
            }
            let reference = String(decoding: bytes[position + 1..<semicolon], as: UTF8.self)
            position = semicolon + 1
            let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
            if let character = named[reference] {
                text += character.utf8
                return
            }
            let number: UInt32? =
                if reference.hasPrefix("#x") || reference.hasPrefix("#X") {
                    UInt32(reference.dropFirst(2), radix: 16)
                } else if reference.hasPrefix("#") {
                    UInt32(reference.dropFirst(), radix: 10)
                } else {
                    nil
                }
            guard let number else { throw Self.corrupted("it holds an unknown entity &\(reference);") }
            if (0xD800...0xDFFF).contains(number) {
                throw ValueStoreError.unpairedSurrogate(UInt16(number))
            }
            guard let scalar = Unicode.Scalar(number) else {
                throw Self.corrupted("&\(reference); is no Unicode character")
            }
            text += String(Character(scalar)).utf8
        }

        /// `bytes` as a string, unchanged: invalid UTF-8 is never repaired.
        private static func string(_ bytes: [UInt8]) throws -> String {
            let string = String(decoding: bytes, as: UTF8.self)
            if string.utf8.elementsEqual(bytes) {
                return string
            }
            // UTF-8 of a surrogate (0xED 0xA0...0xBF): UTF-16 written out unit by unit.
            if let index = bytes.indices.dropLast(2).first(where: { bytes[$0] == 0xED && bytes[$0 + 1] >= 0xA0 }) {
                let unit = UInt16(0xD000) | UInt16(bytes[index + 1] & 0x3F) << 6 | UInt16(bytes[index + 2] & 0x3F)
                throw ValueStoreError.unpairedSurrogate(unit)
            }
            throw corrupted("it holds text that is not UTF-8")
        }

        // MARK: Scalars

        private static func integer(_ text: String) throws -> PropertyListNode {
            var digits = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
            let negative = digits.first == "-"
            if negative || digits.first == "+" {
                digits = digits.dropFirst()
            }
            let radix = digits.hasPrefix("0x") || digits.hasPrefix("0X") ? 16 : 10
            if radix == 16 {
                digits = digits.dropFirst(2)
            }
            guard let magnitude = UInt64(digits, radix: radix) else {
                throw corrupted("<integer>\(text)</integer> is not a 64-bit integer")
            }
            if !negative {
                return Int64(exactly: magnitude).map { .integer($0) } ?? .unsignedInteger(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) + 1 else {
                throw corrupted("<integer>\(text)</integer> is not a 64-bit integer")
            }
            return .integer(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
        }

        private static func real(_ text: String) throws -> PropertyListNode {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Double(trimmed) ?? Double(trimmed.lowercased()) else {
                throw corrupted("<real>\(text)</real> is not a number")
            }
            return .real(value)
        }

        /// A date as property lists write it, `2001-01-01T00:00:00Z`, in UTC.
        private static func date(_ text: String) throws -> Date {
            let trimmed = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
            func number(_ range: Range<Int>) -> Int? {
                guard range.upperBound <= trimmed.count else { return nil }
                return Int(String(decoding: trimmed[range], as: UTF8.self))
            }
            guard trimmed.count == 20, trimmed[4] == UInt8(ascii: "-"), trimmed[7] == UInt8(ascii: "-"),
                trimmed[10] == UInt8(ascii: "T"), trimmed[13] == UInt8(ascii: ":"), trimmed[16] == UInt8(ascii: ":"),
                trimmed[19] == UInt8(ascii: "Z"), let year = number(0..<4), let month = number(5..<7),
                let day = number(8..<10), let hour = number(11..<13), let minute = number(14..<16),
                let second = number(17..<19), (1...12).contains(month), (1...31).contains(day)
            else {
                throw corrupted("<date>\(text)</date> is not a date")
            }
            // Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
            let shiftedYear = month <= 2 ? year - 1 : year
            let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
            let yearOfEra = shiftedYear - era * 400
            let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            let days = era * 146_097 + dayOfEra - 719_468
            let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }

        private static func requireUTF8(declaration: ArraySlice<UInt8>) throws {
            let text = String(decoding: declaration, as: UTF8.self).lowercased()
            guard text.hasPrefix("<?xml"), let range = text.range(of: "encoding") else { return }
            let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
            let encoding = rest.prefix { $0 != "\"" && $0 != "'" }
            guard ["utf-8", "utf8", "us-ascii", "ascii"].contains(encoding) else {
                throw ValueStoreError(
                    .unsupportedFormat,
                    reason: "the XML property list is written in \(encoding), not UTF-8; convert it to UTF-8 "
                        + "(plutil -convert xml1) to use it; nothing was changed")
            }
        }

        private static func corrupted(_ what: String) -> ValueStoreError {
            ValueStoreError(
                .corrupted, reason: "the file is not a valid XML property list: \(what); nothing was changed")
        }
    }
}
