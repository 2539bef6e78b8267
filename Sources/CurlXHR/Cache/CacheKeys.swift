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
