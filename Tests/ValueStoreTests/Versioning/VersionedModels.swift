import Foundation
import ValueStore

/// The two versions Documentation/Versioning.md shows.
enum VersioningGuide {
    struct SettingsV1: VersionedValue {
        static let version = 1
        var name: String
    }

    struct Settings: VersionedValue, Equatable {
        static let version = 2
        typealias PreviousVersion = SettingsV1
        var first: String
        var last: String

        init(first: String, last: String) {
            self.first = first
            self.last = last
        }

        init(migrating old: SettingsV1) throws {
            let parts = old.name.split(separator: " ", maxSplits: 1).map(String.init)
            self.init(first: parts.first ?? "", last: parts.dropFirst().first ?? "")
        }
    }
}

/// A chain of three versions: a name, then first and last names, then an optional email.
enum Chain {
    struct ProfileV1: VersionedValue {
        static let version = 1
        var name: String
    }

    struct ProfileV2: VersionedValue {
        static let version = 2
        var first: String
        var last: String

        init(migrating old: ProfileV1) throws {
            guard !old.name.isEmpty else { throw EmptyName() }
            let parts = old.name.split(separator: " ", maxSplits: 1).map(String.init)
            first = parts[0]
            last = parts.count > 1 ? parts[1] : ""
        }
    }

    struct Profile: VersionedValue, Equatable {
        static let version = 3
        var first: String
        var last: String
        var email: String?

        init(first: String, last: String, email: String? = nil) {
            self.first = first
            self.last = last
            self.email = email
        }

        init(migrating old: ProfileV2) {
            self.init(first: old.first, last: old.last)
        }

        static let ada = Profile(first: "Ada", last: "Lovelace", email: "ada@example.com")
        static let grace = Profile(first: "Grace", last: "Hopper")
    }

    struct EmptyName: Error {}

    /// A chain whose versions do not rise.
    struct Backwards: VersionedValue {
        static let version = 1
        typealias PreviousVersion = ProfileV2
        var name: String

        init(name: String) {
            self.name = name
        }

        init(migrating old: ProfileV2) {
            name = old.first
        }
    }

    /// A chain that skips schema 2: version 3 migrates straight from version 1.
    struct Skipping: VersionedValue {
        static let version = 3
        var name: String

        init(migrating old: ProfileV1) {
            name = old.name
        }
    }
}
