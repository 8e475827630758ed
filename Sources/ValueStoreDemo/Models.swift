import ValueStore

/// The app's settings, saved as JSON.
struct Settings: Codable, Equatable, Sendable {
    var theme: String
    var fontSize: Int
    var recentSearches: [String]

    static let standard = Settings(theme: "system", fontSize: 14, recentSearches: [])
}

/// What an older version of the app kept in a property list, before `Settings` existed.
struct LegacyPreferences: Codable, Sendable {
    var darkMode: Bool
    var textSize: Int

    /// The same preferences in today's shape.
    var settings: Settings {
        Settings(theme: darkMode ? "dark" : "light", fontSize: textSize, recentSearches: [])
    }
}

/// A sign-in the app keeps encrypted.
struct Credential: Codable, Equatable, Sendable {
    var account: String
    var password: String
}

/// The profile as the old app stored it: schema 1, one name.
struct ProfileV1: VersionedValue {
    static let version = 1
    var name: String
}

/// The profile today: schema 2 splits the name.
struct Profile: VersionedValue {
    static let version = 2
    typealias PreviousVersion = ProfileV1
    var first: String
    var last: String

    init(first: String, last: String) {
        self.first = first
        self.last = last
    }

    init(migrating old: ProfileV1) {
        let parts = old.name.split(separator: " ", maxSplits: 1).map(String.init)
        self.init(first: parts.first ?? "", last: parts.dropFirst().first ?? "")
    }
}
