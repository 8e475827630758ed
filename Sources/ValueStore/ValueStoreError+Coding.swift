import Foundation

extension ValueStoreError {
    /// Classifies a decoder's error: malformed input is corrupt data, a well-formed value of the
    /// wrong shape failed to decode. A ``ValueStoreError`` passes through.
    ///
    /// `parses` tells whether the data is well-formed, which the decoders do not: they report a
    /// syntax error and a top-level value they refuse (a raw value no case has) alike. Without
    /// it, such an error is taken for malformed data.
    @usableFromInline
    init(decoding error: any Error, as format: String?, parses: (() -> Bool)? = nil) {
        if let error = error as? ValueStoreError {
            self = error
            return
        }
        guard let error = error as? DecodingError else {
            self.init(.decodingFailed, reason: "the \(format ?? "codec") decoder failed", underlyingError: error)
            return
        }
        switch error {
        case .dataCorrupted(let context)
        where context.codingPath.isEmpty && !(parses?() ?? false):
            // The parser's own words ("Unexpected end of file") say more than the context's.
            // Well-formed data whose top-level value was refused is the next case instead.
            let detail = (context.underlyingError as NSError?)?.userInfo["NSDebugDescription"] as? String
            self.init(
                .corrupted,
                reason: "the data is not valid \(format ?? "input")" + (detail.map { ": \($0)" } ?? ""),
                underlyingError: error
            )
        case .dataCorrupted(let context), .typeMismatch(_, let context):
            self.init(
                .decodingFailed, reason: "\(error.summary): \(context.debugDescription)", underlyingError: error)
        case .valueNotFound, .keyNotFound:
            self.init(.decodingFailed, reason: error.summary, underlyingError: error)
        @unknown default:
            self.init(.decodingFailed, reason: "the \(format ?? "codec") decoder failed", underlyingError: error)
        }
    }

    /// Classifies an encoder's error. A ``ValueStoreError`` passes through.
    @usableFromInline
    init(encoding error: any Error, as format: String?) {
        if let error = error as? ValueStoreError {
            self = error
            return
        }
        if let error = error as? EncodingError, case .invalidValue(_, let context) = error {
            self.init(
                .encodingFailed,
                reason: error.summary(format: format ?? "the stored type") + ": " + context.debugDescription,
                underlyingError: error
            )
            return
        }
        self.init(.encodingFailed, reason: "the \(format ?? "codec") encoder failed", underlyingError: error)
    }
}

extension DecodingError {
    /// What went wrong and where, quoting nothing of the data: `expected Int at settings.count`.
    var summary: String {
        switch self {
        case .dataCorrupted(let context): "invalid value at \(context.codingPath.readable)"
        case .typeMismatch(let type, let context): "expected \(type) at \(context.codingPath.readable)"
        case .valueNotFound(let type, let context): "missing \(type) at \(context.codingPath.readable)"
        case .keyNotFound(let key, let context):
            "missing key '\(key.stringValue)' at \(context.codingPath.readable)"
        @unknown default: "the value could not be decoded"
        }
    }

    /// Where in the value it went wrong, as `settings.recent[2].name`.
    var readableCodingPath: String? {
        switch self {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .keyNotFound(_, let context):
            context.codingPath.readable
        @unknown default: nil
        }
    }
}

extension EncodingError {
    /// What went wrong and where, quoting nothing of the value: `Double at ratio cannot be encoded
    /// as JSON`.
    func summary(format: String) -> String {
        switch self {
        case .invalidValue(let value, let context):
            "\(type(of: value)) at \(context.codingPath.readable) cannot be encoded as \(format)"
        @unknown default: "the value could not be encoded as \(format)"
        }
    }
}

extension Data {
    /// Throws ``ValueStoreError/Code/corrupted`` for empty data, which no format accepts.
    static func requireContent(_ data: Data, format: String) throws {
        if data.isEmpty {
            throw ValueStoreError(.corrupted, reason: "the data is empty (0 bytes), not \(format)")
        }
    }
}

extension [any CodingKey] {
    /// A coding path as a reader would write it: `settings.recent[2].name`.
    var readable: String {
        guard !isEmpty else { return "the top level" }
        var path = ""
        for key in self {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return path
    }
}
