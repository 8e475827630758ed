#if PostgreSQL
import ValueStore

/// A validated table name: a plain or schema-qualified identifier, quoted for SQL, and the
/// notification channel derived from it.
struct PostgresTableName: Sendable, Hashable {
    /// The name as given: `app_values` or `tenant.app_values`.
    let name: String
    /// Each part in double quotes: `"tenant"."app_values"`.
    let quoted: String
    /// The channel the table's writes notify on: at most 63 bytes, a hash for long names.
    let channel: String

    /// Validates `name`: one or two parts separated by a dot, each made of ASCII letters, digits
    /// and underscores, not starting with a digit, at most 63 bytes.
    init(_ name: String) throws {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy(Self.isIdentifier) else {
            throw ValueStoreError(
                .invalidConfiguration,
                store: "PostgreSQL table",
                reason:
                    "the table name is not a plain or schema-qualified identifier (letters, digits and "
                    + "underscores, not starting with a digit, at most 63 bytes a part)"
            )
        }
        self.name = name
        quoted = parts.map { "\"\($0)\"" }.joined(separator: ".")
        let channel = "valuestore:\(name)"
        self.channel =
            channel.utf8.count <= 63 ? channel : "valuestore:\(name.prefix(30)):\(PostgresKey.hash(name))"
    }

    private static func isIdentifier(_ part: Substring) -> Bool {
        guard let first = part.utf8.first, part.utf8.count <= 63 else { return false }
        let isLetter = { (byte: UInt8) in (65...90).contains(byte) || (97...122).contains(byte) || byte == 95 }
        let isDigit = { (byte: UInt8) in (48...57).contains(byte) }
        return isLetter(first) && part.utf8.allSatisfy { isLetter($0) || isDigit($0) }
    }
}

/// How a key appears in a change notification: itself when short, a hash when long, so the
/// payload stays far below PostgreSQL's 8,000-byte limit for any key.
enum PostgresKey {
    /// Keys up to this many UTF-8 bytes travel as they are.
    static let longestPlain = 1_000

    /// `k:` and the key, or `h:` and a 64-bit hash of its bytes. Two long keys with the same hash
    /// only cost each other's streams a spurious reload.
    static func identifier(_ key: String) -> String {
        key.utf8.count <= longestPlain ? "k:\(key)" : "h:\(hash(key))"
    }

    /// FNV-1a over the UTF-8 bytes, as 16 hexadecimal digits.
    static func hash(_ text: some StringProtocol) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
#endif
