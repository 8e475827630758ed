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
