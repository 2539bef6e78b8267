import CCurlShim

/// What following one redirect does to the request: the rules of WHATWG Fetch's
/// "HTTP-redirect fetch", which XMLHttpRequest (and so GDHttpRequest's users) rely on.
///
/// - Only 301, 302, 303, 307 and 308 are redirects; any other 3xx is a response.
/// - 301 and 302 turn a POST into a GET, 303 turns anything but GET and HEAD into a GET; the
///   body goes, and with it the headers that describe it (`Content-Type`, `Content-Encoding`,
///   `Content-Language`, `Content-Location`). 307 and 308 keep method, body and headers.
/// - To another origin (scheme, host or port), no credentials go: neither the user and
///   password given to `open` nor `Authorization` or `Cookie` fields set by the caller (the
///   cookie jar still sends that origin's own cookies). Back at the first origin they go again.
///
/// A pure value: the engine applies it to the easy handle for the next hop.
struct RedirectStep: Equatable {
    /// The most redirects one send follows (as libcurl's `CURLOPT_MAXREDIRS` was set).
    static let maxRedirects = 20

    /// The method of the next request.
    let method: String
    /// The body goes with the next request.
    let keepsBody: Bool
    /// The next request goes to another origin than the one `open` was given.
    let crossOrigin: Bool

    /// Whether a response with `status` is a redirect to follow (given a `Location`).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// The step for a `status` redirect of a request sent with `method`.
    init(status: Int, method: String, crossOrigin: Bool) {
        let becomesGet = switch status {
        case 301, 302: method == "POST"
        case 303: method != "GET" && method != "HEAD"
        default: false
        }
        self.method = becomesGet ? "GET" : method
        keepsBody = !becomesGet
        self.crossOrigin = crossOrigin
    }

    /// Whether the caller's header field `name` goes with the next request.
    func sends(_ name: String) -> Bool {
        if !keepsBody, Self.bodyFields.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) { return false }
        if crossOrigin, Self.credentialFields.contains(where: { MessageValidation.sameFieldName($0.utf8, name.utf8) }) { return false }
        return true
    }

    /// Fetch's request-body-header names.
    static let bodyFields = ["Content-Type", "Content-Encoding", "Content-Language", "Content-Location"]
    /// Fields that carry credentials, never sent to another origin (as libcurl does).
    static let credentialFields = ["Authorization", "Cookie"]

    /// The origin of an absolute URL as libcurl parses it: scheme, host and port (the
    /// scheme's default when none is given), lower-cased; nil when it does not parse.
    static func origin(of url: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        var parts: [String] = []
        for part in [CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT] {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, part, &value, part == CURLUPART_PORT ? UInt32(CURLU_DEFAULT_PORT) : 0) == CURLUE_OK,
                  let value else { return nil }
            parts.append(String(cString: value).lowercased())
            curl_free(value)
        }
        return parts.joined(separator: "|")
    }
}
