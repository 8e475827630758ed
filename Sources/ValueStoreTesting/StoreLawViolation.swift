/// The error ``ValueStoreLaws`` throws when a store breaks a law.
///
/// ```swift
/// do {
///     try await ValueStoreLaws.check(store, samples: 1, 2)
/// } catch let violation as StoreLawViolation {
///     print(violation)   // The store breaks the law 'round trip': saved 1 but loaded 0.
/// }
/// ```
public struct StoreLawViolation: Error, Sendable, CustomStringConvertible {
    /// The law that was broken, such as `"round trip"`.
    public var law: String
    /// What the store did instead.
    public var details: String

    /// Creates a violation.
    ///
    /// - Parameters:
    ///   - law: The law that was broken.
    ///   - details: What the store did instead.
    public init(law: String, details: String) {
        self.law = law
        self.details = details
    }

    /// A sentence naming the law and what happened.
    public var description: String {
        "The store breaks the law '\(law)': \(details)."
    }
}
