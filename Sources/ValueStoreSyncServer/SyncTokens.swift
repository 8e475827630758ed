// How valuestore-sync-server learns a request's account: a JSON Web Token it verifies.
#if PostgreSQL && Configuration && Hummingbird
import Foundation
import JWTKit
import ValueStoreSync

/// The claims the server reads: `sub` is the account, `exp` is required, `aud` is checked when
/// the server has an audience.
struct SyncTokenClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var aud: AudienceClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Verifies the bearer tokens devices send: the signature (an HS256 secret or a JWKS's keys), the
/// expiry, and the audience when one is configured. The account is the token's `sub`.
struct SyncTokens: Sendable {
    let keys: JWTKeyCollection
    let audience: String?

    /// The verifier the configuration names.
    /// - Throws: ``SyncServerConfiguration/Invalid`` when the JWKS file cannot be read or is not
    ///   a key set.
    init(_ configuration: SyncServerConfiguration) async throws {
        keys = JWTKeyCollection()
        audience = configuration.audience
        switch configuration.keys {
        case .hs256(let secret):
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .jwks(let file):
            let json: String
            do {
                json = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
            } catch {
                throw SyncServerConfiguration.Invalid(
                    description: "VALUESTORE_SYNC_JWKS_FILE=\(file) cannot be read: \(error.localizedDescription)")
            }
            do {
                try await keys.add(jwksJSON: json)
            } catch {
                throw SyncServerConfiguration.Invalid(
                    description: "VALUESTORE_SYNC_JWKS_FILE=\(file) is not a JSON Web Key Set: \(error)")
            }
        }
    }

    /// The account of `token`, or `nil` when the token is malformed, badly signed, expired, for
    /// another audience, or has an empty `sub`: each answered 401, so the device fetches a new one.
    func account(for token: String) async -> SyncAccount? {
        guard let claims = try? await keys.verify(token, as: SyncTokenClaims.self) else { return nil }
        if let audience {
            guard let aud = claims.aud, (try? aud.verifyIntendedAudience(includes: audience)) != nil else {
                return nil
            }
        }
        return claims.sub.value.isEmpty ? nil : SyncAccount(id: claims.sub.value)
    }
}
#endif
