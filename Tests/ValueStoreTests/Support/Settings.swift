import Foundation

/// A small settings value, like one an app keeps.
struct Settings: Codable, Equatable, Sendable {
    var theme: String
    var fontSize: Int
    var recent: [String]

    static let standard = Settings(theme: "system", fontSize: 14, recent: [])
    static let custom = Settings(theme: "dark", fontSize: 18, recent: ["a.txt", "b.txt"])
}

enum Theme: String, Codable, Sendable {
    case light, dark
}

/// An error a test throws on purpose.
struct Boom: Error, Equatable {
    var id = 0
}
