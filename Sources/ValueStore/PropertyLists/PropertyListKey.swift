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

// MARK: - Keys of nested dictionaries

/// Two keys of one nested dictionary that differ only in Unicode normalization: a nested
/// dictionary is keyed by `String`, which would merge them, so the file is refused instead.
struct NestedKeyCollision: Error {
    /// The key met second, its scalars exactly as written.
    let key: String

    /// Adds `node` under `key` to a nested dictionary; a key that is already there with other
    /// bytes (`"caf\u{e9}"` beside `"cafe\u{301}"`) throws rather than merge the two.
    ///
    /// ```swift
    /// var nodes: [String: PropertyListNode] = [:]
    /// try NestedKeyCollision.insert(.integer(1), for: "caf\u{e9}", into: &nodes)
    /// try NestedKeyCollision.insert(.integer(2), for: "cafe\u{301}", into: &nodes)   // throws
    /// ```
    static func insert(_ node: PropertyListNode, for key: String, into nodes: inout [String: PropertyListNode])
        throws
    {
        if let index = nodes.index(forKey: key), !nodes.keys[index].utf8.elementsEqual(key.utf8) {
            throw NestedKeyCollision(key: key)
        }
        nodes[key] = node
    }

    /// The error a reader throws for a collision inside the value of the top-level `topKey`.
    func refusal(under topKey: String) -> ValueStoreError {
        ValueStoreError(
            .unsupportedFormat,
            reason:
                "the value of key '\(topKey)' holds a dictionary with two keys that differ only in Unicode "
                + "normalization ('\(key)' is one, \(Self.scalars(of: key))), which this library cannot keep apart "
                + "below the top level; nothing was changed")
    }

    /// The key's scalars in `U+` notation, since both forms print alike.
    static func scalars(of key: String) -> String {
        key.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}

// MARK: - Text that is not Unicode

extension ValueStoreError {
    /// A key or string of the file holds a UTF-16 surrogate without its pair, which no Swift
    /// string holds: reading it would repair it to U+FFFD, and two such keys would merge.
    static func unpairedSurrogate(_ unit: UInt16) -> ValueStoreError {
        ValueStoreError(
            .unsupportedFormat,
            reason:
                "a key or string holds an unpaired UTF-16 surrogate (0x\(String(unit, radix: 16, uppercase: true))), "
                + "which this library cannot keep exactly; nothing was changed")
    }
}
