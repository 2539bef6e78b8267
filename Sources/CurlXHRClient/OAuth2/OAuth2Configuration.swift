#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ``OAuth2Authorizer`` needs to get tokens: the token endpoint, the client's identity,
/// the grant, and where tokens are kept.
///
/// ```swift
/// var oauth = OAuth2Configuration(tokenURL: "https://auth.example.com/o/token/",
///                                 clientID: "reports", clientSecret: secret,
///                                 grant: .clientCredentials)
/// oauth.storage = .file(home + "/.config/reports/tokens.json")
/// ```
public struct OAuth2Configuration: Sendable, Equatable {
    /// How the authorizer gets its first token (RFC 6749, sections 4.3, 4.4 and 6).
    public enum Grant: Sendable, Equatable {
        /// The client's own credentials (`grant_type=client_credentials`).
        case clientCredentials
        /// A resource owner's user name and password (`grant_type=password`); the token is
        /// renewed with its refresh token, and with the password again once none is left.
        case password(username: String, password: String)
        /// A refresh token the application already holds (from an earlier sign-in); once the
        /// server rejects it there is no way to a new token:
        /// ``OAuth2Error/noGrant``.
        case refreshToken(String)
    }

    /// How the client proves itself to the token endpoint (RFC 6749, section 2.3.1).
    public enum ClientAuthentication: Sendable, Equatable {
        /// `Authorization: Basic` with the form-encoded client ID and secret (the default).
        case basic
        /// `client_id` and `client_secret` among the form fields of the request body.
        case formFields
    }

    /// Where tokens are kept.
    public enum Storage: Sendable, Equatable {
        /// In this process only.
        case memory
        /// In a JSON file of mode 0600, replaced atomically on every change and read when the
        /// authorizer is made: a program that starts again uses its tokens without a new grant.
        /// Programs sharing the file take the tokens another one renewed rather than send a
        /// refresh token it rotated. A file written for another token endpoint or client ID is
        /// ignored.
        case file(String)
    }

    /// The token endpoint, such as `https://auth.example.com/oauth/token`.
    public var tokenURL: String
    /// The client ID the authorization server issued.
    public var clientID: String
    /// The client's secret; `nil` for a public client (then `client_id` goes among the form
    /// fields).
    public var clientSecret: String?
    /// How the client ID and secret reach the token endpoint.
    public var clientAuthentication: ClientAuthentication = .basic
    /// How the first token is got.
    public var grant: Grant
    /// The scope asked for (space-separated), or `nil` for the server's default.
    public var scope: String?
    /// Where tokens are kept (default: in memory).
    public var storage: Storage = .memory
    /// How long before its expiry a token is renewed rather than sent; at most a quarter of the
    /// token's lifetime (default 30 s).
    public var refreshLeeway: Duration = .seconds(30)
    /// An RFC 7009 revocation endpoint: ``OAuth2Authorizer/logout()`` revokes the refresh
    /// token (else the access token) there before it forgets them.
    public var revocationURL: String?
    /// Seconds each request to the token and revocation endpoints may take (default 30; 0 for
    /// no limit): a token endpoint that does not answer fails the waiting calls with
    /// ``OAuth2Error/tokenEndpoint(_:)`` rather than holding them.
    public var endpointTimeout: Double = 30

    /// A configuration for the client `clientID` at `tokenURL`.
    public init(tokenURL: String, clientID: String, clientSecret: String? = nil,
                clientAuthentication: ClientAuthentication = .basic, grant: Grant, scope: String? = nil,
                storage: Storage = .memory, refreshLeeway: Duration = .seconds(30), revocationURL: String? = nil,
                endpointTimeout: Double = 30) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientAuthentication = clientAuthentication
        self.grant = grant
        self.scope = scope
        self.storage = storage
        self.refreshLeeway = refreshLeeway
        self.revocationURL = revocationURL
        self.endpointTimeout = endpointTimeout
    }
}
