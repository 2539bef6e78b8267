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

    /// Whether `target` (a URL libcurl resolved) has the origin of `opened`, the URL given to
    /// `open`. Most redirects stay on the origin and libcurl writes the target with the same
    /// `scheme://authority/` bytes: that is checked first, without parsing either URL.
    static func sameOrigin(_ target: String, _ opened: String) -> Bool {
        if let prefix = originPrefix(opened), target.utf8.starts(with: prefix) { return true }
        return origin(of: target) == origin(of: opened)
    }

    /// `scheme://authority/` of an absolute URL, as its bytes.
    private static func originPrefix(_ url: String) -> Substring.UTF8View? {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let rest = bytes[colon...].dropFirst()
        guard rest.starts(with: "//".utf8) else { return nil }
        let authority = rest.dropFirst(2)
        guard let slash = authority.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
              bytes[slash] == UInt8(ascii: "/") else { return nil }
        return Substring(url)[..<bytes.index(after: slash)].utf8
    }

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

extension RecordedHead {
    /// Whether a field named `name` (case-insensitive) is among the head's lines, read in
    /// place.
    func hasField(_ name: String) -> Bool {
        var rest = lines[...]
        while !rest.isEmpty {
            let end = rest.firstIndex(of: 0x0A) ?? rest.endIndex
            let line = rest[rest.startIndex..<end]
            if let first = line.first, first != 0x20, first != 0x09, let colon = line.firstIndex(of: 0x3A),
               MessageValidation.sameFieldName(line[..<colon], name.utf8) {
                return true
            }
            rest = end < rest.endIndex ? rest[(end + 1)...] : rest[rest.endIndex...]
        }
        return false
    }
}
