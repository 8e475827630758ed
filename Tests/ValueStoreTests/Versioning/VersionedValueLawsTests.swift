import Foundation
import Testing
import ValueStoreTesting

@testable import ValueStore
@testable import ValueStoreTestHelper

@Suite struct VersionedValueLawsTests {
    typealias Profile = Chain.Profile

    static let fixtures: [Int: Data] = [
        1: VersionedTests.v1,
        2: VersionedTests.v2,
        3: VersionedTests.envelope(3, #"{"first":"Ada","last":"Lovelace","email":"ada@example.com"}"#),
    ]

    @Test func shippedVersionsPass() async throws {
        try await VersionedValueLaws.check(Profile.self, fixtures: Self.fixtures)
    }

    /// SettingsV1 once stored `name`; someone renamed it to `fullName` after it shipped.
    enum Edited {
        struct ProfileV1: VersionedValue {
            static let version = 1
            var fullName: String
        }

        struct Profile: VersionedValue {
            static let version = 2
            var name: String

            init(migrating old: ProfileV1) {
                name = old.fullName
            }
        }
    }

    @Test func anEditedSchemaIsCaught() async throws {
        let violation = try await #require(throws: StoreLawViolation.self) {
            try await VersionedValueLaws.check(
                Edited.Profile.self,
                fixtures: [
                    1: VersionedTests.v1,
                    2: VersionedTests.envelope(2, #"{"name":"Ada Lovelace"}"#),
                ])
        }
        #expect(violation.law == "every shipped version loads")
        #expect(violation.details.contains("the fixture for schema 1 failed to load"))
        #expect(violation.details.contains("missing key 'fullName'"))
    }

    @Test func everyVersionNeedsAFixture() async throws {
        let violation = try await #require(throws: StoreLawViolation.self) {
            try await VersionedValueLaws.check(Profile.self, fixtures: [3: Self.fixtures[3]!])
        }
        #expect(violation.law == "a fixture per version")
        #expect(violation.details == "no fixture for schema 2 (ProfileV2), schema 1 (ProfileV1)")

        var extra = Self.fixtures
        extra[5] = VersionedTests.v4
        let unknown = try await #require(throws: StoreLawViolation.self) {
            try await VersionedValueLaws.check(Profile.self, fixtures: extra)
        }
        #expect(unknown.details.hasPrefix("the fixture for schema 5 matches no type"))
    }

    @Test func aMislabelledFixtureIsCaught() async throws {
        var fixtures = Self.fixtures
        fixtures[1] = VersionedTests.v2
        let violation = try await #require(throws: StoreLawViolation.self) {
            try await VersionedValueLaws.check(Profile.self, fixtures: fixtures)
        }
        #expect(violation.law == "fixture is labelled")
        #expect(
            violation.description
                == "The store breaks the law 'fixture is labelled': the fixture for schema 1 says schema 2.")
    }
}
