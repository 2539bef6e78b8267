/// Why an ``OAuth2Authorizer`` has no token to give.
///
/// Through an ``HttpClient`` it arrives as ``HttpClientError/authorization(_:)``.
public enum OAuth2Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token endpoint refused the grant or the refresh with an RFC 6749 error response:
    /// `error` is its code (`invalid_grant` for a revoked, expired or already used refresh
    /// token or a wrong password; `invalid_client`; `unauthorized_client`…), `status` the HTTP
    /// status. A refused refresh token is forgotten: it is never sent again.
    case rejected(status: Int, error: String, description: String?)
    /// The token endpoint could not be reached, or answered something other than a token or
    /// an error response; `reason` says what.
    case tokenEndpoint(String)
    /// There is no token and no grant to get one: the refresh token of a
    /// ``OAuth2Configuration/Grant/refreshToken(_:)`` configuration was refused earlier.
    case noGrant
    /// ``OAuth2Authorizer/logout()`` ended this authorizer's session.
    case loggedOut
    /// The task waiting for the token was cancelled.
    case cancelled

    /// A sentence for people.
    public var description: String {
        switch self {
        case .rejected(let status, let error, let description):
            return "the token endpoint refused (HTTP \(status), \(error))" + (description.map { ": \($0)" } ?? "")
        case .tokenEndpoint(let reason):
            return "no token from the token endpoint: \(reason)"
        case .noGrant:
            return "no token, and no grant to get one (the refresh token was refused)"
        case .loggedOut:
            return "logged out"
        case .cancelled:
            return "cancelled while waiting for a token"
        }
    }
}
