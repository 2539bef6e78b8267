import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide Kerberos settings and the library's own ticket cache, mirroring
/// `GDCacheController`.
///
/// `open(…, user: "alice@EXAMPLE.COM", password: …, auth: "NEGOTIATE")` turns the password
/// into tickets with libkrb5 and keeps them in ``cacheFile``. Every later request that gives
/// no credentials uses those tickets when a server asks for Negotiate; while the library's
/// cache holds no valid ticket-granting ticket, the user's default cache (what `kinit`
/// filled, or `KRB5CCNAME`) is used instead.
public enum KerberosCredentials {
    private struct Settings {
        var cacheFile: String?
        var allowDelegation = false
        /// Whether the cache holds a valid ticket-granting ticket; nil until first looked at.
        var hasTickets: Bool?
    }

    private static let settings = Locked(Settings())

    /// The library's credential cache: a file with mode 0600, by default
    /// `$XDG_STATE_HOME/curlxhr/krb5cc` (else `~/.local/state/curlxhr/krb5cc`). Set it before
    /// the first request that needs it to keep tickets elsewhere.
    public static var cacheFile: String {
        get { settings.withLock { $0.cacheFile } ?? defaultCacheFile }
        set {
            changeSettings {
                $0.cacheFile = newValue
                $0.hasTickets = nil
            }
        }
    }

    /// Lets servers receive delegated (forwardable) credentials (`CURLOPT_GSSAPI_DELEGATION`).
    /// Default `false`. Changing it removes the tickets, so the next ones are obtained with
    /// the new setting.
    public static var allowDelegation: Bool {
        get { settings.withLock { $0.allowDelegation } }
        set {
            let changed = changeSettings { settings in
                defer { settings.allowDelegation = newValue }
                return settings.allowDelegation != newValue
            }
            if changed { clearCredentials(forMethod: "NEGOTIATE") }
        }
    }

    /// Forgets stored credentials for one scheme ("BASIC", "DIGEST", "NTLM", "NEGOTIATE", "ANY") or,
    /// with nil, for all. For NEGOTIATE the tickets are removed from the cache file. The other
    /// schemes keep nothing between requests: their credentials live only in the request that
    /// was given them.
    /// - Returns: `false` for an unknown scheme name or a cache that could not be removed.
    @discardableResult
    public static func clearCredentials(forMethod method: String?) -> Bool {
        guard let scheme = method.map({ AuthScheme(rawValue: $0.uppercased()) }) else {
            return removeTickets()
        }
        switch scheme {
        case .negotiate?: return removeTickets()
        case .basic?, .digest?, .ntlm?, .any?: return true
        case nil: return false
        }
    }

    // MARK: Internals

    /// `$XDG_STATE_HOME/curlxhr/krb5cc`, else `~/.local/state/curlxhr/krb5cc`, as the
    /// environment was when first asked.
    public static let defaultCacheFile: String = {
        if let state = getenv("XDG_STATE_HOME"), state.pointee != 0 {
            return String(cString: state) + "/curlxhr/krb5cc"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/state/curlxhr/krb5cc"
    }()

    /// Changes the settings and tells the engine to read them again.
    @discardableResult
    private static func changeSettings<Result>(_ change: (inout Settings) -> Result) -> Result {
        defer { ProcessSettings.changed() }
        return settings.withLock(change)
    }

    private static func removeTickets() -> Bool {
        let path = cacheFile
        let code = cxhr_krb5_destroy(path)
        changeSettings { $0.hasTickets = false }
        return code == 0
    }

    /// Gets tickets for `principal` from the KDC into the cache; returns why it failed, or nil.
    static func obtainTickets(principal: String, password: String) -> String? {
        let path = cacheFile
        PrivateFiles.makeParentDirectories(of: path)
        var error = [CChar](repeating: 0, count: 512)
        let code = cxhr_krb5_get_tickets(principal, password, path, allowDelegation, &error, error.count)
        changeSettings { $0.hasTickets = code == 0 }
        return code == 0 ? nil : String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The cache GSS-API should use now: the library's while it holds a valid ticket-granting
    /// ticket, else nil for the user's default cache.
    static var activeCacheFile: String? {
        let (path, known) = settings.withLock { ($0.cacheFile ?? defaultCacheFile, $0.hasTickets) }
        let hasTickets = known ?? (cxhr_krb5_has_tickets(path) != 0)
        if known == nil { settings.withLock { $0.hasTickets = hasTickets } }
        return hasTickets ? path : nil
    }

}
