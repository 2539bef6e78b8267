/// How the cache names what it stores (RFC 9111, section 2 and 4.1): the primary key is the
/// request's URL as libcurl normalizes it, without a fragment; a response with `Vary` also
/// keeps the request's values of the fields it names, and serves only requests with the same.
enum CacheKeys {
    /// The primary key of a request for `url` (``HTTPURL/cacheKey``); nil for a URL that
    /// does not parse.
    static func primary(_ url: String) -> String? { HTTPURL(url)?.cacheKey }

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
}
