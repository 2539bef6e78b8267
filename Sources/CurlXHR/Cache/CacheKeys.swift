import CCurlShim

/// How the cache names what it stores (RFC 9111, section 2 and 4.1): the primary key is the
/// request's URL as libcurl normalizes it, without a fragment; a response with `Vary` also
/// keeps the request's values of the fields it names, and serves only requests with the same.
enum CacheKeys {
    /// The primary key of a request for `url`; `nil` for a URL libcurl does not parse. URLs
    /// that differ only in the case of the scheme and host, a default port given or not, or
    /// the fragment have one key (RFC 3986, section 6.2.3).
    static func primary(_ url: String) -> String? {
        withURL(url) { handle in
            _ = curl_url_set(handle, CURLUPART_FRAGMENT, nil, 0)
            if let host = text(of: handle, CURLUPART_HOST) { _ = curl_url_set(handle, CURLUPART_HOST, host.lowercased(), 0) }
            if let port = text(of: handle, CURLUPART_PORT), let scheme = text(of: handle, CURLUPART_SCHEME)?.lowercased(),
               (scheme, port) == ("http", "80") || (scheme, port) == ("https", "443") {
                _ = curl_url_set(handle, CURLUPART_PORT, nil, 0)
            }
            return text(of: handle, CURLUPART_URL)
        }
    }

    /// `reference` (absolute, or relative to `base`) as an absolute URL.
    static func resolve(_ reference: String, against base: String) -> String? {
        withURL(base) { handle in
            guard curl_url_set(handle, CURLUPART_URL, reference, 0) == CURLUE_OK else { return nil }
            _ = curl_url_set(handle, CURLUPART_FRAGMENT, nil, 0)
            return text(of: handle, CURLUPART_URL)
        }
    }

    /// Scheme, host and port of an absolute URL (the scheme's default port when none is given).
    static func origin(of url: String) -> String? { RedirectStep.origin(of: url) }

    /// The fields of `message` as they go out, for `Vary` (section 4.1 compares the fields the
    /// request sent): the caller's, and what libcurl adds: the `Cookie` of the jar (`jar`, ""
    /// for none; only with cookie handling on), an `Authorization` for credentials (a tag of
    /// them, ``credentialTag(_:)``: stored, it must not reveal the password), and the
    /// `Accept-Encoding` of content decoding.
    static func fieldsAsSent(_ message: RequestMessage, switches: TransferSwitches, jar: String) -> CacheRules.Fields {
        var fields = message.headers.map { (name: $0.name, value: $0.value) }
        if switches.cookies, !jar.isEmpty { fields.append((name: "Cookie", value: jar)) }
        // Credentials count as an Authorization field (RFC 9111, 3.5); so does an
        // authentication round (``CacheExchange/headArrived(_:afterRedirect:afterChallenge:decoded:)``).
        if message.credentials != nil || message.urlHasUser, HeaderFieldNames.first("Authorization", in: fields) == nil {
            fields.append((name: "Authorization", value: credentialTag(message.credentials, url: message.url)))
        }
        if switches.contentDecoding, HeaderFieldNames.first("Accept-Encoding", in: fields) == nil {
            fields.append((name: "Accept-Encoding", value: ContentDecoder.acceptedEncodings))
        }
        return fields
    }

    /// What stands for credentials among the fields `Vary` compares: the same for the same
    /// scheme, user and password (or URL with its user), different otherwise, and of no use
    /// to whoever reads the cache's index: keyed with a secret of the process (so a response
    /// that varies on them is served only within the process that stored it).
    static func credentialTag(_ credentials: Credentials?, url: String) -> String {
        var hasher = Hasher()
        hasher.combine(processSecret.0)
        hasher.combine(processSecret.1)
        if let credentials {
            hasher.combine(credentials.scheme.rawValue)
            hasher.combine(credentials.user)
            hasher.combine(credentials.password)
        } else {
            hasher.combine(url)
        }
        return "credentials " + String(UInt64(bitPattern: Int64(hasher.finalize())), radix: 16)
    }

    private static let processSecret: (UInt64, UInt64) = {
        var random = SystemRandomNumberGenerator()
        return (random.next(), random.next())
    }()

    /// The field names a response's `Vary` lists, lower-cased, in order, without repeats.
    static func varyNames(_ responseFields: CacheRules.Fields) -> [String] {
        var names: [String] = []
        for name in (HeaderFieldNames.value("Vary", in: responseFields) ?? "").split(separator: ",") {
            let trimmed = HeaderFieldNames.trimmed(name).lowercased()
            if !trimmed.isEmpty, !names.contains(trimmed) { names.append(trimmed) }
        }
        return names
    }

    /// A request's values of the fields `names`, as compared for `Vary` (section 4.1): the
    /// values of each name joined with ", ", spaces around commas removed; `nil` for an absent field.
    static func varyValues(_ names: [String], in requestFields: CacheRules.Fields) -> [String?] {
        names.map { name in
            HeaderFieldNames.value(name, in: requestFields).map { value in
                value.split(separator: ",", omittingEmptySubsequences: false).map { HeaderFieldNames.trimmed($0) }.joined(separator: ",")
            }
        }
    }

    private static func withURL(_ url: String, _ body: (OpaquePointer) -> String?) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        return body(handle)
    }

    private static func text(of handle: OpaquePointer, _ part: CURLUPart) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, part, &value, 0) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
