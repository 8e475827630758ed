import Foundation

/// What is left of a decoder's or an encoder's error once everything the data put into it is
/// removed: the kind of failure, the types involved and the coding path.
///
/// The data of an encrypted store is decrypted plaintext, and Foundation's coders quote it in
/// their messages (`Cannot initialize Role from invalid String value sk_live_…`), as an
/// `EncodingError` holds the value it refused. Errors from encrypted stores carry this instead,
/// so no secret reaches a log through `description`, `debugDescription` or `underlyingError`.
/// The coding path names the value's keys; a dictionary's keys are part of the data, so keep
/// secrets out of them.
struct RedactedCodingError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, quoting no data: `expected String at credential.role`.
    let summary: String
    /// The coding path, as `settings.recent[2].name`, when the error had one.
    let codingPath: String?
    /// The type of the error that was redacted, such as `DecodingError`.
    let redactedType: String

    /// Redacts the error a decoder (`decoding` is `true`) or an encoder threw for `format`;
    /// `malformed` when the data did not parse at all.
    init(_ error: any Error, decoding: Bool, malformed: Bool, format: String) {
        redactedType = String(reflecting: type(of: error))
        switch error {
        case _ where malformed:
            codingPath = nil
            summary = "the data is not valid \(format)"
        case let error as DecodingError:
            codingPath = error.readableCodingPath
            summary = error.summary
        case let error as EncodingError:
            if case .invalidValue(_, let context) = error {
                codingPath = context.codingPath.readable
            } else {
                codingPath = nil
            }
            summary = error.summary(format: format)
        default:
            codingPath = nil
            summary = "the \(format) \(decoding ? "decoder" : "encoder") failed with \(redactedType)"
        }
    }

    var description: String {
        "\(summary) (details redacted: the data is decrypted)"
    }

    var debugDescription: String {
        "RedactedCodingError(\(summary); a \(redactedType) was redacted)"
    }
}

extension ValueStoreError {
    /// `error`, thrown while decoding (`decoding` is `true`) or encoding plaintext, with its code
    /// and store but with a ``RedactedCodingError`` in place of the reason and the underlying
    /// error the coder wrote.
    init(redacting error: any Error, decoding: Bool, format: String) {
        let original = error as? ValueStoreError
        let cause = original?.underlyingError ?? error
        let redacted = RedactedCodingError(
            cause, decoding: decoding, malformed: original?.code == .corrupted, format: format)
        self.init(
            original?.code ?? (decoding ? .decodingFailed : .encodingFailed),
            store: original?.store,
            reason: redacted.summary,
            underlyingError: redacted
        )
    }
}

extension Codec where Input: Codable & Sendable, Output == Data {
    /// ``json``, for plaintext that was decrypted: its errors keep the code, the coding path and
    /// the types involved, never the data.
    static var redactedJSON: Self {
        let json = Self.json
        return Self(
            to: { value in
                do {
                    return try json.to(value)
                } catch {
                    throw ValueStoreError(redacting: error, decoding: false, format: "JSON")
                }
            },
            from: { data in
                guard !data.isEmpty else {
                    throw ValueStoreError(.corrupted, reason: "the data is empty (0 bytes), not JSON")
                }
                do {
                    return try json.from(data)
                } catch {
                    throw ValueStoreError(redacting: error, decoding: true, format: "JSON")
                }
            }
        )
    }
}
