#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An access token with what came with it.
public struct OAuth2Token: Sendable, Equatable, Codable {
    /// The bearer token sent in `Authorization: Bearer …`.
    public var accessToken: String
    /// The token type the server named (`Bearer`).
    public var tokenType: String
    /// The refresh token, if the server issued one.
    public var refreshToken: String?
    /// When the access token expires, in seconds since 1970; `nil` when the server did not say.
    public var expiresAt: Double?
    /// Its lifetime in seconds as the server gave it (`expires_in`).
    public var lifetime: Double?
    /// The scope granted, when the server named it.
    public var scope: String?

    /// A token; `expiresAt` and `lifetime` in seconds.
    public init(accessToken: String, tokenType: String = "Bearer", refreshToken: String? = nil,
                expiresAt: Double? = nil, lifetime: Double? = nil, scope: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.lifetime = lifetime
        self.scope = scope
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", tokenType = "token_type", refreshToken = "refresh_token"
        case expiresAt = "expires_at", lifetime, scope
    }

    /// Whether the token should be renewed rather than sent at `now`: it expires within
    /// `leeway` seconds, or a quarter of its lifetime when that is shorter.
    func isDue(at now: Double, leeway: Double) -> Bool {
        guard let expiresAt else { return false }
        let margin = lifetime.map { min(leeway, $0 / 4) } ?? leeway
        return now >= expiresAt - margin
    }
}

/// A token endpoint's successful answer (RFC 6749, section 5.1).
struct TokenResponse: Decodable {
    let access_token: String
    let token_type: String?
    let expires_in: Double?
    let refresh_token: String?
    let scope: String?

    /// The token it gives at `now`. A refresh answer without a refresh token keeps
    /// `previousRefreshToken` (section 6: the server may leave it as it was).
    func token(at now: Double, previousRefreshToken: String?) -> OAuth2Token {
        OAuth2Token(accessToken: access_token, tokenType: token_type ?? "Bearer",
                    refreshToken: refresh_token ?? previousRefreshToken,
                    expiresAt: expires_in.map { now + $0 }, lifetime: expires_in, scope: scope)
    }
}

/// A token endpoint's error answer (RFC 6749, section 5.2).
struct TokenErrorResponse: Decodable {
    let error: String
    let error_description: String?
}
