import CCurlShim

/// An absolute http or https URL, parsed once by libcurl's URL API into what the library asks
/// of a URL: its scheme, host and port, its origin, its path (for cookies) and the name the
/// cache stores it under. Cookies, redirects, the cache, the credential rules and the client
/// layer all read URLs through it; only ``MessageValidation/parseURL(_:)`` parses.
package struct HTTPURL: Sendable, Hashable {
    /// "http" or "https".
    package let scheme: String
    /// The host as libcurl reads it, lower-cased (an IPv6 address keeps its brackets).
    package let host: String
    /// The port given in the URL, or the scheme's default.
    package let port: Int
    /// The path, "/" when the URL has none.
    package let path: String
    /// The URL as the cache names a response (RFC 9111, section 2): libcurl's normalized text
    /// without the fragment, the host lower-cased, the scheme's default port left out, so
    /// that URLs differing only in those have one key (RFC 3986, section 6.2.3).
    package let cacheKey: String
    /// The URL carries a user name (`http://user:password@host/`).
    package let hasUser: Bool

    /// `text` parsed; nil when ``MessageValidation/parseURL(_:)`` refuses it (not an absolute
    /// http or https URL, or one with CR, LF, NUL or a backslash in its authority).
    package init?(_ text: String) {
        guard case .success(let parsed) = MessageValidation.parseURL(text) else { return nil }
        self.init(parsed)
    }

    /// `reference` (absolute, or relative to `base`, as a `Location` is) resolved against
    /// `base`; nil when either does not parse.
    package init?(_ reference: String, relativeTo base: String) {
        guard case .success(let parsed) = MessageValidation.parseURL(base),
              curl_url_set(parsed.handle, CURLUPART_URL, reference, 0) == CURLUE_OK,
              let resolved = Self.part(parsed.handle, CURLUPART_URL) else { return nil }
        self.init(resolved)
    }

    private init?(_ parsed: ParsedURL) {
        let handle = parsed.handle
        _ = curl_url_set(handle, CURLUPART_FRAGMENT, nil, 0)
        guard let host = Self.part(handle, CURLUPART_HOST)?.lowercased(),
              let port = Self.part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap({ Int($0) })
        else { return nil }
        scheme = parsed.isHTTPS ? "https" : "http"
        self.host = host
        self.port = port
        path = Self.part(handle, CURLUPART_PATH) ?? "/"
        hasUser = parsed.hasUser
        _ = curl_url_set(handle, CURLUPART_HOST, host, 0)
        if port == (parsed.isHTTPS ? 443 : 80) { _ = curl_url_set(handle, CURLUPART_PORT, nil, 0) }
        guard let key = Self.part(handle, CURLUPART_URL) else { return nil }
        cacheKey = key
    }

    package var isHTTPS: Bool { scheme == "https" }

    /// Scheme, host and port (RFC 6454): two URLs with the same may share credentials.
    package var origin: String { "\(scheme)://\(host):\(port)" }

    /// Whether two absolute URLs have the same origin. Most pairs compared (a redirect on its
    /// origin, a client's call to its base URL) have the same `scheme://authority` bytes,
    /// case aside: those are told without parsing either.
    package static func sameOrigin(_ one: String, _ other: String) -> Bool {
        if let first = MessageValidation.schemeAndAuthority(one), let second = MessageValidation.schemeAndAuthority(other),
           MessageValidation.sameFieldName(first, second) {
            return true
        }
        guard let first = HTTPURL(one), let second = HTTPURL(other) else { return false }
        return first.origin == second.origin
    }

    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, flags: UInt32 = 0) -> String? {
        var text: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &text, flags) == CURLUE_OK, let text else { return nil }
        defer { curl_free(text) }
        return String(cString: text)
    }
}

/// A request's URL as libcurl's URL API parsed it (a `CURLU` handle), made once by `open` and
/// kept with the message.
///
/// The engine hands it to libcurl with `CURLOPT_CURLU`, and libcurl copies its parts for each
/// send instead of parsing the URL's text and writing it out again, as it does for a URL set
/// with `CURLOPT_URL` (in libcurl 7.88, about 11,000 instructions a request: BENCHMARKS.md).
/// Never changed once made: libcurl only reads it (`curl_url_dup`, on the engine thread), and
/// whoever set it on an easy handle keeps a reference while it is set there.
final class ParsedURL: @unchecked Sendable {
    /// libcurl's handle, owned here.
    let handle: OpaquePointer
    /// The URL carries a user name (`http://user:password@host/`).
    let hasUser: Bool
    /// The scheme is https (else http: the only two `parseURL` accepts).
    let isHTTPS: Bool

    init(handle: OpaquePointer, hasUser: Bool, isHTTPS: Bool) {
        self.handle = handle
        self.hasUser = hasUser
        self.isHTTPS = isHTTPS
    }

    /// The handle as `CURLOPT_CURLU` takes it.
    var option: UnsafeMutableRawPointer { UnsafeMutableRawPointer(handle) }

    deinit { curl_url_cleanup(handle) }
}
