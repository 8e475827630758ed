/// The one error type of value stores: it separates absence from every kind of failure.
///
/// A ``code`` says what happened, ``store`` names the store (for a file, its path), ``reason``
/// explains it in words, and ``underlyingError`` keeps the error that caused it. Printing the
/// error reads as a sentence:
///
/// ```
/// The stored data is corrupted in file '/tmp/app/settings.json': the file is empty (0 bytes).
/// ```
///
/// Match on the code, in a `catch` clause or with `==`; both compare codes only, so they match
/// whichever store the error came from:
///
/// ```swift
/// do {
///     return try await store.load()
/// } catch ValueStoreError.notFound {
///     return nil
/// }
/// ```
///
/// > Important: Only ``Code/notFound`` means "nothing is stored". The recovery combinators
/// > (``ValueStore/default(_:)``, ``ValueStore/load(default:)``, ``ValueStore/replacing(_:)``,
/// > ``ValueStore/cached()``) recover from it and from nothing else, so a default never hides
/// > corrupt or unreadable data.
public struct ValueStoreError: Error, Sendable {
    /// What kind of failure happened. Extensible: stores may define their own codes.
    ///
    /// ```swift
    /// extension ValueStoreError.Code {
    ///     static let offline = Self("offline")
    /// }
    /// ```
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as printed.
        public var rawValue: String

        /// Creates a code with a name.
        ///
        /// - Parameter rawValue: A short camel-case name, such as `"offline"`.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code's name.
        public var description: String { rawValue }

        /// No value is stored. The only code the recovery combinators recover from.
        public static let notFound = Self("notFound")
        /// The stored bytes are damaged: empty, truncated or not in the store's format.
        public static let corrupted = Self("corrupted")
        /// The stored data is well-formed but does not decode as the value's type.
        public static let decodingFailed = Self("decodingFailed")
        /// The value could not be encoded for storage; nothing was written.
        public static let encodingFailed = Self("encodingFailed")
        /// A file-system or device operation failed (open, write, sync, rename, permissions).
        public static let io = Self("io")
        /// The store is locked: its key is not available until it is unlocked.
        public static let locked = Self("locked")
        /// Encrypted data failed authentication: it was tampered with or damaged.
        public static let authenticationFailed = Self("authenticationFailed")
        /// Encrypted data was written with a key the store does not hold.
        public static let wrongKey = Self("wrongKey")
        /// Encrypted data belongs to another item: it was copied from another file.
        public static let itemMismatch = Self("itemMismatch")
        /// The stored data is in a format or version this library does not read.
        public static let unsupportedFormat = Self("unsupportedFormat")
        /// The stored data has a schema version above the one this app reads: a newer version of
        /// the app wrote it. This app neither reads it nor overwrites it.
        ///
        /// ```swift
        /// catch ValueStoreError.newerVersion {
        ///     showUpdateAppPrompt()
        /// }
        /// ```
        ///
        /// See ``ValueStore/versioned(_:legacyVersion:)``.
        public static let newerVersion = Self("newerVersion")
        /// A key or other configuration is invalid.
        public static let invalidConfiguration = Self("invalidConfiguration")
        /// The operation is unimplemented: a placeholder store was used.
        public static let unimplemented = Self("unimplemented")
        /// A file was written from inside the body of an update of the same file, or from a
        /// task started there while the body ran; nothing was written. Change the update's
        /// value instead.
        ///
        /// ```swift
        /// catch ValueStoreError.nestedWrite {
        ///     assertionFailure("write through the update's value")
        /// }
        /// ```
        public static let nestedWrite = Self("nestedWrite")
        /// The store's server could not be reached: the connection was refused or timed out, or
        /// the server is a read-only standby. The operation did not happen; trying again later
        /// may succeed.
        ///
        /// ```swift
        /// catch let error as ValueStoreError where error.code == .unavailable {
        ///     showOfflineBanner()
        /// }
        /// ```
        ///
        /// Never ``notFound``, so ``ValueStore/default(_:)`` and ``StoredValue`` never hide it.
        public static let unavailable = Self("unavailable")
        /// The connection was lost after the write was sent to the server: it may or may not have
        /// happened. Load the value again to find out.
        ///
        /// ```swift
        /// catch let error as ValueStoreError where error.code == .outcomeUnknown {
        ///     current = try await flags.load()
        /// }
        /// ```
        ///
        /// Never ``notFound``, so ``ValueStore/default(_:)`` and ``StoredValue`` never hide it.
        public static let outcomeUnknown = Self("outcomeUnknown")
    }

    /// What kind of failure happened.
    public var code: Code
    /// The store involved, such as `"file '/tmp/app/settings.json'"`, when known.
    public var store: String?
    /// What went wrong, in words, such as `"the file is empty (0 bytes)"`.
    public var reason: String?
    /// The error that caused this one, such as a `DecodingError` or an errno.
    public var underlyingError: (any Error)?

    /// Creates an error.
    ///
    /// ```swift
    /// throw ValueStoreError(.corrupted, store: "file 'a.json'", reason: "the file is empty")
    /// ```
    ///
    /// - Parameters:
    ///   - code: What kind of failure happened.
    ///   - store: The store involved, when known.
    ///   - reason: What went wrong, in words.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code,
        store: String? = nil,
        reason: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.store = store
        self.reason = reason
        self.underlyingError = underlyingError
    }

    /// No value is stored.
    ///
    /// ```swift
    /// throw ValueStoreError.notFound
    /// ```
    public static var notFound: Self { Self(.notFound) }

    /// The stored data has a schema version newer than the app reads, for matching in a `catch`.
    ///
    /// ```swift
    /// catch ValueStoreError.newerVersion {
    ///     showUpdateAppPrompt()
    /// }
    /// ```
    public static var newerVersion: Self { Self(.newerVersion) }

    /// A file was written from inside an update of the same file, for matching in a `catch`.
    ///
    /// ```swift
    /// catch ValueStoreError.nestedWrite {
    ///     assertionFailure("write through the update's value")
    /// }
    /// ```
    public static var nestedWrite: Self { Self(.nestedWrite) }

    /// Whether an error is a ``ValueStoreError`` with the same code as `pattern`, so that
    /// `catch ValueStoreError.notFound` matches absence from any store.
    ///
    /// - Parameters:
    ///   - pattern: The error whose code to match.
    ///   - error: The error thrown.
    /// - Returns: `true` when the codes are equal.
    public static func ~= (pattern: Self, error: any Error) -> Bool {
        (error as? Self)?.code == pattern.code
    }
}

extension ValueStoreError: Equatable {
    /// Two errors are equal when their codes are, wherever they came from, so that
    /// `#expect(throws: ValueStoreError.notFound)` matches absence from any store.
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: `true` when the codes are equal.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code
    }
}

extension ValueStoreError: CustomStringConvertible, CustomDebugStringConvertible {
    /// A sentence that says what happened, where, and why. The underlying error appears only
    /// when there is no reason, which already says what it meant.
    public var description: String {
        var sentence = summary
        if let store {
            sentence += " in \(store)"
        }
        if let explanation = reason ?? underlyingError.map({ "\($0)" }) {
            sentence += ": \(explanation)"
        }
        if let last = sentence.last, !".!?".contains(last) {
            sentence += "."
        }
        return sentence
    }

    /// The description, followed by the underlying error in full.
    public var debugDescription: String {
        guard let underlyingError, reason != nil else { return description }
        return "\(description) Underlying error: \(String(reflecting: underlyingError))"
    }

    private var summary: String {
        switch code {
        case .notFound: "No value is stored"
        case .corrupted: "The stored data is corrupted"
        case .decodingFailed: "The stored data could not be decoded"
        case .encodingFailed: "The value could not be encoded"
        case .io: "An I/O operation failed"
        case .locked: "The store is locked"
        case .authenticationFailed: "The stored data failed authentication"
        case .wrongKey: "The stored data was encrypted with a different key"
        case .itemMismatch: "The stored data belongs to a different item"
        case .unsupportedFormat: "The stored data is in an unsupported format"
        case .newerVersion: "The stored data was written by a newer version of the app"
        case .invalidConfiguration: "The store is misconfigured"
        case .unimplemented: "The operation is unimplemented"
        case .nestedWrite: "A write was nested inside an update of the same file"
        case .unavailable: "The store's server is unavailable"
        case .outcomeUnknown: "The write's outcome is unknown"
        default: "The store failed (\(code))"
        }
    }
}

extension ValueStoreError {
    /// The same error, naming `store` when it names none yet.
    @usableFromInline
    func naming(_ store: String?) -> Self {
        guard self.store == nil, let store else { return self }
        var copy = self
        copy.store = store
        return copy
    }
}
