public import Foundation
public import ValueStore

/// Checks that a ``/ValueStore/VersionedValue`` still reads what every shipped version stored.
///
/// Keep one stored sample of each version the app ever shipped, as it was written then, and
/// check them in a test. Editing a shipped version's type (renaming a property, changing its
/// type) makes its sample fail to load, so the mistake shows up before users' data is at stake.
///
/// ```swift
/// @Test func everyShippedSettingsVersionLoads() async throws {
///     try await VersionedValueLaws.check(
///         Settings.self,
///         fixtures: [
///             1: Data(#"{"version":1,"value":{"name":"Ada Lovelace"}}"#.utf8),
///             2: Data(#"{"version":2,"value":{"first":"Ada","last":"Lovelace"}}"#.utf8),
///         ]
///     )
/// }
/// ```
///
/// Samples are best kept as files in the test target, copied from a real app's storage when the
/// version shipped. Declare the folder as a resource of the test target in `Package.swift`,
/// `resources: [.copy("Fixtures")]`, and read it through `Bundle.module`:
///
/// ```swift
/// let folder = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!
/// let fixtures = [1: try Data(contentsOf: folder.appending(path: "settings-v1.json"))]
/// ```
///
/// The laws:
/// - **A fixture per version**: every version of the chain, from the current type down to the
///   first, has a fixture, and every fixture belongs to a version of the chain.
/// - **Fixture is labelled**: the fixture under version `n` is an envelope that says version `n`.
/// - **Every shipped version loads**: each fixture loads through
///   ``/ValueStore/ValueStore/versioned(_:legacyVersion:)`` and migrates to the current type.
public enum VersionedValueLaws {
    /// Checks that a stored sample of every version loads and migrates to `type`.
    ///
    /// ```swift
    /// try await VersionedValueLaws.check(Settings.self, fixtures: [1: v1Sample, 2: v2Sample])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The current version.
    ///   - fixtures: The bytes each version stored, by version.
    /// - Throws: ``StoreLawViolation`` naming the first law broken and the version concerned.
    public static func check<Value: VersionedValue>(
        _ type: Value.Type,
        fixtures: [Int: Data]
    ) async throws {
        var chain: [(version: Int, type: String)] = []
        collect(Value.self, into: &chain)
        let versions = Set(chain.map(\.version))
        let missing = chain.filter { fixtures[$0.version] == nil }
        if !missing.isEmpty {
            throw StoreLawViolation(
                law: "a fixture per version",
                details: "no fixture for "
                    + missing.map { "schema \($0.version) (\($0.type))" }.joined(separator: ", ")
            )
        }
        for version in fixtures.keys.sorted() where !versions.contains(version) {
            throw StoreLawViolation(
                law: "a fixture per version",
                details: "the fixture for schema \(version) matches no type of the chain "
                    + chain.map { "\($0.type) (schema \($0.version))" }.joined(separator: " → ")
            )
        }
        for (version, data) in fixtures.sorted(by: { $0.key < $1.key }) {
            let stored: Int?
            do {
                stored = try JSONDecoder().decode(Header.self, from: data).version
            } catch {
                throw StoreLawViolation(
                    law: "fixture is labelled",
                    details: "the fixture for schema \(version) is not a JSON envelope: \(error)"
                )
            }
            if stored != version {
                throw StoreLawViolation(
                    law: "fixture is labelled",
                    details: "the fixture for schema \(version) says schema \(stored.map(String.init) ?? "none")"
                )
            }
            do {
                _ = try await ValueStore<Void, Data>.inMemory(data).versioned(Value.self).load()
            } catch {
                throw StoreLawViolation(
                    law: "every shipped version loads",
                    details: "the fixture for schema \(version) failed to load as \(Value.self): \(error)"
                )
            }
        }
    }

    /// Lists the chain from `Version` down to the first version.
    private static func collect<Version: VersionedValue>(
        _ type: Version.Type,
        into chain: inout [(version: Int, type: String)]
    ) {
        chain.append((Version.version, String(describing: Version.self)))
        typealias Previous = Version.PreviousVersion
        if Previous.self != NoPreviousVersion.self, Previous.version < Version.version {
            collect(Previous.self, into: &chain)
        }
    }

    /// The envelope's version, `{"version":N,…}`.
    private struct Header: Decodable {
        let version: Int?
    }
}
