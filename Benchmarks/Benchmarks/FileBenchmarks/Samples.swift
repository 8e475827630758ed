import Foundation

/// The small value: an app's settings, about 1 KB encoded.
struct Settings: Codable, Equatable, Sendable {
    var theme: String
    var accentColor: String
    var fontSize: Double
    var showsLineNumbers: Bool
    var autosaveInterval: Int
    var lastOpened: Date
    var recentDocuments: [String]

    /// 1,016 bytes of JSON and 1,041 of binary property list.
    static let sample = Settings(
        theme: "dark",
        accentColor: "#3478F6",
        fontSize: 13.5,
        showsLineNumbers: true,
        autosaveInterval: 30,
        lastOpened: Date(timeIntervalSinceReferenceDate: 800_000_000),
        recentDocuments: (1...11).map { "/Users/someone/Documents/Projects/ValueStore/Notes/meeting-notes-\($0).md" }
    )
}

/// The smallest value: a credential, as an app keeps in an encrypted file.
struct Credential: Codable, Equatable, Sendable {
    var account: String
    var token: String
    var expires: Date

    /// About 130 bytes of JSON.
    static let sample = Credential(
        account: "someone@example.com",
        token: String(repeating: "3f9a0c7e", count: 8),
        expires: Date(timeIntervalSinceReferenceDate: 800_000_000)
    )
}

/// One entry of the large value.
struct Record: Codable, Equatable, Sendable {
    var id: Int
    var title: String
    var rating: Double
    var isFavorite: Bool
    var tags: [String]
}

/// The large value: a library of a few thousand small records, about 600 KB of JSON.
struct Library: Codable, Equatable, Sendable {
    var records: [Record]

    /// 597,651 bytes of JSON and 362,512 of binary property list (which stores each distinct
    /// string and number once).
    static let sample = Library(count: 6_600)

    /// About 1 MB of JSON (1,002,030 bytes), for the encrypted store.
    static let megabyte = Library(count: 11_000)

    init(count: Int) {
        self.init(
            records: (0..<count).map { index in
                Record(
                    id: index,
                    title: "Record \(index)",
                    rating: Double(index % 50) / 10,
                    isFavorite: index % 7 == 0,
                    tags: ["tag\(index % 13)", "group\(index % 5)"]
                )
            })
    }

    init(records: [Record]) {
        self.records = records
    }
}
