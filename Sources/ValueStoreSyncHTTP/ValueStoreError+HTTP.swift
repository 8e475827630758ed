public import ValueStore

extension ValueStoreError.Code {
    /// The sync server refused the request's credentials (HTTP 401): the token is missing,
    /// expired, badly signed or meant for another audience. The client asked its token source
    /// for a new token once; every change stays pending.
    ///
    /// ```swift
    /// catch let error as ValueStoreError where error.code == .unauthorized {
    ///     await auth.signIn()
    /// }
    /// ```
    public static let unauthorized = Self("unauthorized")
    /// The sync server knows who is asking and refuses the request (HTTP 403): it names an
    /// account other than the authenticated one.
    ///
    /// ```swift
    /// catch let error as ValueStoreError where error.code == .forbidden {
    ///     print("signed in as another user")
    /// }
    /// ```
    public static let forbidden = Self("forbidden")
}
