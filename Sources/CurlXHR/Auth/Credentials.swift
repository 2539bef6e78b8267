import CCurlShim

/// An authentication scheme that `open` and the proxy switches accept.
enum AuthScheme: String, Sendable, CaseIterable {
    case basic = "BASIC"
    case digest = "DIGEST"
    case ntlm = "NTLM"
    case negotiate = "NEGOTIATE"

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
        }
    }
}

/// User name and password for a server or a proxy.
struct Credentials: Sendable, Equatable {
    var user: String
    var password: String
    var scheme: AuthScheme

    /// The scheme `auth` names and the credentials for `user` (nil without one), or why they
    /// cannot be used. `party` names whose they are in the text ("" or "proxy ").
    static func parse(user: String?, password: String?, auth: String?, party: String = "") -> Result<(AuthScheme, Credentials?), ParseProblem> {
        guard let scheme = AuthScheme(name: auth) else {
            return .failure(ParseProblem(message: "unknown \(party)authentication scheme '\(auth ?? "")': use BASIC, DIGEST, NTLM or NEGOTIATE"))
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
