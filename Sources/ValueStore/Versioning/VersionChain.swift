import Foundation

/// The versions a ``VersionedValue`` type can read, from the current type down to the first, each
/// with the way to decode it and migrate it to the current type.
///
/// ``VersionEnvelope`` reads and writes the stored bytes.
struct VersionChain<Current: VersionedValue>: Sendable {
    /// How to read data stored by one version.
    struct Step: Sendable {
        let version: Int
        let type: String
        /// Decodes the envelope's value as this version's type and migrates it to the current one.
        let decodeValue: @Sendable (_ envelope: KeyedDecodingContainer<EnvelopeKey>) throws -> Current
        /// Decodes bare data (no envelope) as this version's type and migrates it.
        let decodeBare: @Sendable (_ decoder: any Decoder) throws -> Current
        /// Decodes the value's own bytes, cut out of an envelope, as this version's type and
        /// migrates it; `nil` when they do not decode, so that a full parse can say why.
        let decodeValueBytes: @Sendable (_ value: Data, _ decoder: JSONDecoder) throws -> Current?
    }

    /// Every version, the current one first.
    let steps: [Step]
    /// The version data without an envelope is read as, if any.
    let legacyVersion: Int?
    /// Why the chain cannot be used, when its types or `legacyVersion` are inconsistent.
    let problem: String?

    init(legacyVersion: Int?) {
        var steps: [Step] = []
        var problem: String?
        Self.collect(Current.self, lift: { $0 }, path: [], into: &steps, problem: &problem)
        if problem == nil, let legacyVersion, !steps.contains(where: { $0.version == legacyVersion }) {
            problem = "legacyVersion \(legacyVersion) is not a version of the chain \(Self.describe(steps))"
        }
        self.steps = steps
        self.legacyVersion = legacyVersion
        self.problem = problem
    }

    /// Adds `Version` and, recursively, the versions before it. `lift` migrates a `Version` to
    /// the current type; `path` names the types from the one after `Version` to the current one.
    private static func collect<Version: VersionedValue>(
        _ type: Version.Type,
        lift: @escaping @Sendable (_ value: Version) throws -> Current,
        path: [String],
        into steps: inout [Step],
        problem: inout String?
    ) {
        let name = String(describing: Version.self)
        let path = [name] + path
        let version = Version.version
        @Sendable func migrate(_ value: Version) throws -> Current {
            do {
                return try lift(value)
            } catch let failure as MigrationFailure {
                let tried = path.prefix(path.count - failure.remainingTypes + 1)
                throw ValueStoreError(
                    .decodingFailed,
                    reason: "stored by schema \(version); \(tried.last ?? name)(migrating:) threw "
                        + "\(Swift.type(of: failure.error)); types tried: \(tried.joined(separator: " → "))",
                    underlyingError: failure.error
                )
            }
        }
        steps.append(
            Step(
                version: version,
                type: name,
                decodeValue: { envelope in
                    let value: Version
                    do {
                        value = try envelope.decode(Version.self, forKey: .value)
                    } catch {
                        throw failure(decoding: error, version: version, type: name)
                    }
                    return try migrate(value)
                },
                decodeBare: { decoder in
                    let value: Version
                    do {
                        value = try decoder.singleValueContainer().decode(Version.self)
                    } catch {
                        throw failure(decoding: error, version: version, type: name)
                    }
                    return try migrate(value)
                },
                decodeValueBytes: { bytes, decoder in
                    let value: Version
                    do {
                        value = try decoder.decode(Version.self, from: bytes)
                    } catch {
                        return nil  // the caller parses the whole envelope, which reports the failure
                    }
                    return try migrate(value)
                }
            )
        )
        typealias Previous = Version.PreviousVersion
        guard Previous.self != NoPreviousVersion.self else { return }
        guard Previous.version < version else {
            problem =
                "\(Previous.self) (schema \(Previous.version)) comes before \(name) (schema \(version)), "
                + "but each PreviousVersion must have a lower version"
            return
        }
        let remainingTypes = path.count
        collect(
            Previous.self,
            lift: { old in
                let migrated: Version
                do {
                    migrated = try Version(migrating: old)
                } catch {
                    throw MigrationFailure(remainingTypes: remainingTypes, error: error)
                }
                return try lift(migrated)
            },
            path: path,
            into: &steps,
            problem: &problem
        )
    }

    /// A decoding failure of a stored version, naming the version and the type tried.
    private static func failure(decoding error: any Error, version: Int, type: String) -> ValueStoreError {
        let classified = ValueStoreError(decoding: error, as: "JSON")
        return ValueStoreError(
            classified.code,
            reason: "stored by schema \(version), which did not decode as \(type)"
                + (classified.reason.map { ": \($0)" } ?? "") + "; types tried: \(type)",
            underlyingError: classified.underlyingError ?? error
        )
    }

    /// `Settings (schema 3) → SettingsV2 (schema 2) → SettingsV1 (schema 1)`.
    static func describe(_ steps: [Step]) -> String {
        steps.map { "\($0.type) (schema \($0.version))" }.joined(separator: " → ")
    }

    /// The step that reads `version`, or the error that says why none does.
    func step(for version: Int) throws -> Step {
        if version > Current.version {
            throw ValueStoreError(
                .newerVersion,
                reason: "stored by schema \(version); this app reads up to \(Current.version)"
            )
        }
        guard let step = steps.first(where: { $0.version == version }) else {
            throw ValueStoreError(
                .decodingFailed,
                reason: "stored by schema \(version), which no type of the chain declares; types tried: "
                    + Self.describe(steps)
            )
        }
        return step
    }
}

/// An `init(migrating:)` that threw, with the number of types from its type to the current one.
private struct MigrationFailure: Error {
    let remainingTypes: Int
    let error: any Error
}

/// The keys of the envelope, `{"version":N,"value":V}`.
enum EnvelopeKey: String, CodingKey {
    case version
    case value
}
