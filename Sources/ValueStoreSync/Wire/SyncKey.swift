import Foundation

/// The one rule for keys, on the device and in every server: a key is its Unicode canonical
/// composition (NFC). Two spellings of one text (`"é"` as one scalar, or as `"e"` and a combining
/// accent) are one key everywhere: Swift's `String` compares them equal, and PostgreSQL, which
/// compares bytes, gets the same bytes for both.
///
/// A replica's stores take their key in this form, and each server puts a pushed change's key in
/// it before it reads or writes anything, so a change from a replica that predates the rule
/// lands on the same record too.
package enum SyncKey {
    /// `key` in its canonical composition (NFC).
    ///
    /// ```swift
    /// SyncKey.normalized("e\u{301}") == "\u{e9}"   // and their UTF-8 bytes are the same
    /// ```
    package static func normalized(_ key: String) -> String {
        key.precomposedStringWithCanonicalMapping
    }

    /// The most bytes of UTF-8 a synced key may take: well under what a PostgreSQL index entry
    /// holds (about 2.7 KB, with the account).
    package static let maximumBytes = 1_024

    /// Why no server can keep `key`, or `nil` when every one can: a key whose canonical
    /// composition, which servers keep, is over `limit` (``maximumBytes`` by default), or with
    /// U+0000, which no PostgreSQL text holds.
    ///
    /// ```swift
    /// SyncKey.unstorable("a\u{0}b")   // "the key holds U+0000, which a database's text cannot"
    /// ```
    package static func unstorable(_ key: String, limit: Int = maximumBytes) -> String? {
        // As a server keeps it: its composition, at most three times as long in UTF-8 (U+1D160
        // takes 4 bytes, 12 composed), so composed only when it could pass `limit` (never for
        // ASCII, which is its own composition, nor under no limit).
        let bytes = key.utf8.count
        let composed = bytes > limit / 3 && key.utf8.contains(where: { $0 >= 0x80 }) ? normalized(key) : key
        if composed.utf8.count > limit {
            return "the key is \(composed.utf8.count) bytes, over the \(limit) a synced key may take"
        }
        if key.utf8.contains(0) { return "the key holds U+0000, which a database's text cannot" }
        return nil
    }

    /// `request` with every change's key in its canonical composition.
    package static func normalizingKeys(of request: SyncPushRequest) -> SyncPushRequest {
        var request = request
        for index in request.changes.indices {
            request.changes[index].key = normalized(request.changes[index].key)
        }
        return request
    }
}
