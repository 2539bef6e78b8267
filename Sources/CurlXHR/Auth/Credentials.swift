import CCurlShim

extension HttpRequest {
    /// An authentication scheme, as ``open(_:url:async:user:password:auth:)`` and the proxy
    /// switches name them (their `auth` text is the raw value, in any case).
    public enum AuthScheme: String, Sendable, CaseIterable {
        /// Basic: the user and password in every request (use it over HTTPS).
        case basic = "BASIC"
        /// Digest (RFC 7616).
        case digest = "DIGEST"
        /// NTLM; the user may be `DOMAIN\user`.
        case ntlm = "NTLM"
        /// Kerberos through SPNEGO; a `user@REALM` name and its password get tickets through
        /// libkrb5, kept in the library's credential cache (see ``KerberosCredentials``).
        case negotiate = "NEGOTIATE"
        /// The strongest of NTLM, Digest and Basic that the server's 401 offers, as curl's
        /// `--anyauth`: the first request goes without credentials to learn which. Kerberos is
        /// asked for by name (``negotiate``): its tickets are not the user and password given.
        case any = "ANY"
    }

    /// A user name, a password and the scheme to present them with, for a server or a proxy.
    public struct Credentials: Sendable, Equatable {
        /// The user name (`DOMAIN\user` for NTLM, `user@REALM` for Kerberos).
        public var user: String
        /// The password.
        public var password: String
        /// How they are sent.
        public var scheme: AuthScheme

        /// Credentials presented with `scheme` (Basic by default).
        /// - Parameters:
        ///   - user: the user name.
        ///   - password: the password.
        ///   - scheme: the authentication scheme.
        public init(user: String, password: String, scheme: AuthScheme = .basic) {
            self.user = user
            self.password = password
            self.scheme = scheme
        }
    }
}

typealias AuthScheme = HttpRequest.AuthScheme
typealias Credentials = HttpRequest.Credentials

extension HttpRequest.AuthScheme {
    /// `nil` means Basic; names are case-insensitive.
    init?(name: String?) {
        guard let name else { self = .basic; return }
        guard let scheme = AuthScheme(rawValue: name.uppercased()) else { return nil }
        self = scheme
    }

    /// The `CURLOPT_HTTPAUTH`/`CURLOPT_PROXYAUTH` value. Negotiate waits for the challenge
    /// (`CURLAUTH_ONLY`): sent first, libcurl would run GSS-API, and ask the KDC for a ticket,
    /// for every request to every server.
    var curlMask: UInt {
        switch self {
        case .basic: cxhr_auth_basic
        case .digest: cxhr_auth_digest
        case .ntlm: cxhr_auth_ntlm
        case .negotiate: cxhr_auth_negotiate | cxhr_auth_only
        // Not CURLAUTH_ANY: with it libcurl answers a Negotiate offer with whatever tickets
        // the default credential cache holds, whoever the user given is.
        case .any: cxhr_auth_ntlm | cxhr_auth_digest | cxhr_auth_basic
        }
    }
}

extension HttpRequest.Credentials {
    /// The scheme `auth` names and the credentials for `user` (nil without one), or why they
    /// cannot be used. `party` names whose they are in the text ("" or "proxy ").
    static func parse(user: String?, password: String?, auth: String?, party: String = "") -> Result<(AuthScheme, Credentials?), ParseProblem> {
        guard let scheme = AuthScheme(name: auth) else {
            return .failure(ParseProblem(message: "unknown \(party)authentication scheme '\(auth ?? "")': use BASIC, DIGEST, NTLM, NEGOTIATE or ANY"))
        }
        guard let user else { return .success((scheme, nil)) }
        if let problem = problem(user: user, password: password, scheme: scheme) { return .failure(ParseProblem(message: problem)) }
        return .success((scheme, Credentials(user: user, password: password ?? "", scheme: scheme)))
    }

    struct ParseProblem: Error {
        let message: String
    }

    /// Why `user` and `password` cannot be used with `scheme`, or nil when they can.
    static func problem(user: String, password: String?, scheme: AuthScheme) -> String? {
        // They go into the request's head (Basic, Digest, NTLM): a line break would split it.
        guard MessageValidation.isFieldValue(user) else {
            return "the user name '\(MessageValidation.escaped(user))' contains CR, LF or NUL"
        }
        guard MessageValidation.isFieldValue(password ?? "") else { return "the password contains CR, LF or NUL" }
        if scheme == .negotiate, !user.isEmpty, user.contains("\\") || !user.contains("@") {
            return "Kerberos needs a user@REALM name, not '\(MessageValidation.escaped(user))'"
        }
        return nil
    }
}
