/// A key of a property list's top-level dictionary, equal to another only when both hold the same
/// Unicode scalars (the same UTF-8 bytes).
///
/// Swift's `String` equality is canonical equivalence, so `"caf\u{e9}"` (NFC) and `"cafe\u{301}"`
/// (NFD) are one dictionary key, and a dictionary of strings keeps only one of them. A property
/// list may hold both; keyed by this type, each keeps its own value.
///
/// ```swift
/// PropertyListKey("caf\u{e9}") == PropertyListKey("cafe\u{301}")   // false
/// ```
@usableFromInline
struct PropertyListKey: Hashable, Sendable, CustomStringConvertible {
    /// The key, with its scalars exactly as written.
    @usableFromInline let name: String

    @inlinable
    init(_ name: String) {
        self.name = name
    }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name.utf8.elementsEqual(rhs.name.utf8)
    }

    @inlinable
    func hash(into hasher: inout Hasher) {
        var name = name
        name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    @usableFromInline
    var description: String { name }
}
