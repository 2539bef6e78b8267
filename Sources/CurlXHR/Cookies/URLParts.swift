import CCurlShim

/// The scheme, host and path of a URL, parsed by libcurl.
struct URLParts {
    var scheme: String
    var host: String
    var path: String

    init?(_ url: String) {
        guard MessageValidation.urlProblem(url) == nil, let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart) -> String? {
            var text: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &text, 0) == CURLUE_OK, let text else { return nil }
            defer { curl_free(text) }
            return String(cString: text)
        }
        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST) else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host
        self.path = part(CURLUPART_PATH) ?? "/"
    }
}
