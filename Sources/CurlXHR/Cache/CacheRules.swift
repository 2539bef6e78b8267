/// RFC 9111's rules for a private cache, as pure functions of a stored response, a request and
/// the time: whether a response may be stored, how fresh a stored one is, whether it may be
/// reused as it is, must be validated first, or cannot serve; the conditional request that
/// validates it; how a 304 updates it; what an unsafe method's success invalidates.
///
/// Times are seconds since 1970 as `Double`; header fields are `(name, value)` pairs in order.
package enum CacheRules {
    package typealias Fields = [(name: String, value: String)]

    /// A response as the cache keeps it: its head, and when its request went and it came.
    package struct Stored: Sendable {
        package var status: Int
        package var fields: Fields
        /// When the request that brought it was sent.
        package var requestTime: Double
        /// When its head arrived.
        package var responseTime: Double

        package init(status: Int, fields: Fields, requestTime: Double, responseTime: Double) {
            self.status = status
            self.fields = fields
            self.requestTime = requestTime
            self.responseTime = responseTime
        }
    }

    // MARK: Storing (section 3)

    /// Statuses whose responses may be reused with heuristic freshness (RFC 9110, 15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses whose caching rules this cache understands (`must-understand`).
    static let understood: Set<Int> = [200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501]

    /// Whether the response to a request of `method` with `requestFields` may be stored.
    /// Only GET responses are stored (a HEAD is answered from them); a 206 or 304 never is on
    /// its own.
    static func isStorable(method: String, requestFields: Fields, status: Int, responseFields: Fields) -> Bool {
        guard method == "GET", status >= 200, status != 206, status != 304 else { return false }
        let response = CacheControl(responseFields)
        let request = CacheControl(requestFields)
        if response.has("must-understand") {
            // Understood: no-store, meant for caches that do not know must-understand, yields.
            guard understood.contains(status) else { return false }
        } else if response.has("no-store") {
            return false
        }
        if request.has("no-store") { return false }
        // A Vary of "*" never matches a later request.
        if let vary = HeaderFieldNames.value("Vary", in: responseFields),
           vary.split(separator: ",").contains(where: { HeaderFieldNames.trimmed($0) == "*" }) {
            return false
        }
        // Section 3.5: a response to a request with credentials only when the response says so.
        if HeaderFieldNames.first("Authorization", in: requestFields) != nil,
           !(response.has("must-revalidate") || response.has("public") || response.has("s-maxage")) {
            return false
        }
        return response.has("public") || response.has("private") || response.seconds("max-age") != .absent
            || HeaderFieldNames.first("Expires", in: responseFields) != nil || heuristicallyCacheable.contains(status)
            || response.has("no-cache")
    }

    /// Fields never stored (section 3.1): hop-by-hop ones (RFC 9110, 7.6.1), those the
    /// response's `Connection` names, and those of the proxy the request went through.
    static let notStored: Set<String> = ["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade",
                                         "proxy-authenticate", "proxy-authentication-info"]

    /// `fields` as a stored response keeps them.
    static func storedFields(_ fields: Fields) -> Fields {
        let connectionListed = Set((HeaderFieldNames.value("Connection", in: fields) ?? "")
            .split(separator: ",").map { HeaderFieldNames.trimmed($0).lowercased() })
        return fields.filter {
            let name = $0.name.lowercased()
            return !notStored.contains(name) && !connectionListed.contains(name)
        }
    }

    // MARK: Freshness (section 4.2)

    /// The freshness lifetime of `stored` in seconds, and whether it is a heuristic one.
    static func freshnessLifetime(_ stored: Stored) -> (seconds: Double, heuristic: Bool) {
        let control = CacheControl(stored.fields)
        switch control.seconds("max-age") {
        case .valid(let seconds): return (Double(seconds), false)
        case .invalid: return (0, false)
        case .absent: break
        }
        if HeaderFieldNames.first("Expires", in: stored.fields) != nil {
            // An Expires that is not an HTTP-date ("0", say) is in the past (section 5.3).
            guard let expires = expires(stored) else { return (0, false) }
            let date = HeaderFieldNames.date("Date", in: stored.fields) ?? stored.responseTime
            return (max(0, expires - date), false)
        }
        // Heuristic freshness: a tenth of the time since Last-Modified, for statuses that allow it.
        guard heuristicallyCacheable.contains(stored.status) || control.has("public"),
              let lastModified = HeaderFieldNames.date("Last-Modified", in: stored.fields) else { return (0, false) }
        let date = HeaderFieldNames.date("Date", in: stored.fields) ?? stored.responseTime
        return (max(0, (date - lastModified) / 10), true)
    }

    /// The time `stored`'s `Expires` names, read strictly (``HTTPDate``); nil when it is not
    /// an HTTP-date, or when several `Expires` fields disagree (a field defined once).
    static func expires(_ stored: Stored) -> Double? {
        let values = stored.fields.filter { HeaderFieldNames.same($0.name, "Expires") }.map { HeaderFieldNames.trimmed($0.value) }
        guard let value = values.first, values.allSatisfy({ $0 == value }) else { return nil }
        return HTTPDate.seconds(value, reference: stored.responseTime)
    }

    /// The `Age` of `fields` in seconds (section 5.1): the first member when several came (in
    /// one field or more), without parameters (`7200;foo=bar`); nil when that is not
    /// delta-seconds (`-1`, `1.5`, `abc`), capped at 2^31.
    static func ageValue(_ fields: Fields) -> Int? {
        guard let value = HeaderFieldNames.first("Age", in: fields) else { return nil }
        let member = value.split(separator: ",", omittingEmptySubsequences: false)[0]
        return CacheControl.deltaSeconds(HeaderFieldNames.trimmed(member.split(separator: ";", omittingEmptySubsequences: false)[0]))
    }

    /// The current age of `stored` at `now` in seconds (section 4.2.3).
    static func currentAge(_ stored: Stored, now: Double) -> Double {
        let ageValue = ageValue(stored.fields).map(Double.init) ?? 0
        let dateValue = HeaderFieldNames.date("Date", in: stored.fields) ?? stored.responseTime
        let apparentAge = max(0, stored.responseTime - dateValue)
        let responseDelay = max(0, stored.responseTime - stored.requestTime)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now - stored.responseTime)
    }

    // MARK: Reuse (section 4)

    /// What to do with a stored response for a request.
    enum Reuse: Equatable, Sendable {
        /// Serve it as it is; `age` for its `Age` field.
        case fresh(age: Int)
        /// Serve it although stale: the request's `max-stale` allows it.
        case stale(age: Int)
        /// Serve it although stale: it is within the `stale-while-revalidate` window the
        /// response gave (RFC 5861, section 3). The cache makes no validation in the
        /// background: every request in the window is answered so, the first after it validates.
        case staleWhileRevalidate(age: Int)
        /// Ask the server first (with the conditions of ``validation(for:requestFields:)``).
        case validate
    }

    /// Whether `stored` may answer a request with `requestFields` at `now`.
    static func reuse(_ stored: Stored, requestFields: Fields, now: Double) -> Reuse {
        let request = CacheControl(requestFields)
        let response = CacheControl(stored.fields)
        let requestSaysNoCache = request.has("no-cache")
            || (request.directives.isEmpty && HeaderFieldNames.value("Pragma", in: requestFields)?.lowercased().contains("no-cache") == true)
        if requestSaysNoCache || response.has("no-cache") { return .validate }
        let lifetime = freshnessLifetime(stored).seconds
        let age = currentAge(stored, now: now)
        let ageField = Int(min(age, Double(1 << 31)))
        switch request.seconds("max-age") {
        case .valid(let limit) where age > Double(limit): return .validate
        case .invalid: return .validate
        default: break
        }
        switch request.seconds("min-fresh") {
        case .valid(let margin) where lifetime - age < Double(margin): return .validate
        case .invalid: return .validate
        default: break
        }
        if lifetime > age { return .fresh(age: ageField) }
        // Stale: served only when the response or the request allows it, and the response does
        // not forbid it.
        guard !response.has("must-revalidate") else { return .validate }
        if case .valid(let window) = response.seconds("stale-while-revalidate"), age - lifetime <= Double(window) {
            return .staleWhileRevalidate(age: ageField)
        }
        guard request.has("max-stale") else { return .validate }
        switch request.seconds("max-stale") {
        case .valid(let allowed): return age - lifetime <= Double(allowed) ? .stale(age: ageField) : .validate
        case .invalid: return request.argument("max-stale") == nil ? .stale(age: ageField) : .validate
        case .absent: return .stale(age: ageField)
        }
    }

    /// The conditions that validate `stored` for a request with `requestFields` (section
    /// 4.3.1): `If-None-Match` with its entity tag, `If-Modified-Since` with its
    /// `Last-Modified`; none when it has neither (then it is fetched again in full). With them,
    /// unless the request has directives of its own (`Cache-Control`, or `Pragma`, which then
    /// stays alone), `Cache-Control: max-age=0`: the stored response may not serve without the
    /// origin's word, so a cache on the way must not answer the validation from a copy of its
    /// own either (section 5.2.1.1), as a browser's validating reload asks.
    static func validation(for stored: Stored, requestFields: Fields) -> Fields {
        var fields: Fields = []
        if let tag = HeaderFieldNames.first("ETag", in: stored.fields) { fields.append(("If-None-Match", tag)) }
        if let modified = HeaderFieldNames.first("Last-Modified", in: stored.fields) { fields.append(("If-Modified-Since", modified)) }
        if !fields.isEmpty, HeaderFieldNames.first("Cache-Control", in: requestFields) == nil,
           HeaderFieldNames.first("Pragma", in: requestFields) == nil {
            fields.append(("Cache-Control", "max-age=0"))
        }
        return fields
    }

    // MARK: Parts (section 3.4; RFC 9110, section 14)

    /// The bytes of a body of `size` bytes that a `Range` field value asks for, when one
    /// stored complete response answers it: a single `bytes` range (`first-last`, `first-`,
    /// `-suffix`), clipped to the body. Nil for anything else (another unit, several ranges,
    /// bad syntax, nothing of the body): the request then goes to the server, which answers
    /// it as it sees fit (a 416, or the whole body).
    static func byteRange(_ value: String, size: Int64) -> ClosedRange<Int64>? {
        let text = HeaderFieldNames.trimmed(value)
        guard text.utf8.count <= 100, text.lowercased().hasPrefix("bytes="), size > 0 else { return nil }
        let spec = HeaderFieldNames.trimmed(text.dropFirst(6))
        let sides = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2 else { return nil }
        if sides[0].isEmpty {
            guard let suffix = position(sides[1]), suffix > 0 else { return nil }
            return max(0, size - suffix)...(size - 1)
        }
        guard let first = position(sides[0]), first < size else { return nil }
        if sides[1].isEmpty { return first...(size - 1) }
        guard let last = position(sides[1]), last >= first else { return nil }
        return first...min(last, size - 1)
    }

    /// `1*DIGIT` as a byte position, capped at 2^62 (beyond any body).
    private static func position(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var value: Int64 = 0
        for digit in text.utf8 {
            guard value < 1 << 58 else { return 1 << 62 }  // so that ten times it stays far from overflowing
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return min(value, 1 << 62)
    }

    /// The fields of a 206 made from `stored`, whose body has `size` bytes, for `part`: its
    /// own but `Content-Length` and `Content-Range`, then those of the part.
    static func partFields(_ stored: Stored, part: ClosedRange<Int64>, size: Int64) -> Fields {
        stored.fields.filter { !HeaderFieldNames.same($0.name, "Content-Length") && !HeaderFieldNames.same($0.name, "Content-Range") }
            + [("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound)/\(size)"), ("Content-Length", "\(part.upperBound - part.lowerBound + 1)")]
    }

    // MARK: Updating (sections 3.2 and 4.3.4)

    /// Fields a 304 never changes in a stored response: hop-by-hop ones (section 3.1), those the
    /// stored body depends on (it is kept decoded), and Content-Length.
    static let keptOnUpdate: Set<String> = ["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding",
                                            "upgrade", "content-length", "content-encoding", "content-range"]

    /// `stored` updated by a 304 that came at `responseTime` for a request sent at
    /// `requestTime`: each of the 304's fields replaces those of its name, but the fields of
    /// ``keptOnUpdate`` and those the 304's `Connection` names.
    static func updated(_ stored: Stored, by notModified: Fields, requestTime: Double, responseTime: Double) -> Stored {
        let connectionListed = Set((HeaderFieldNames.value("Connection", in: notModified) ?? "")
            .split(separator: ",").map { HeaderFieldNames.trimmed($0).lowercased() })
        let replacing = notModified.filter {
            let name = $0.name.lowercased()
            return !keptOnUpdate.contains(name) && !connectionListed.contains(name)
        }
        let replacedNames = Set(replacing.map { $0.name.lowercased() })
        var result = stored
        result.fields = stored.fields.filter { !replacedNames.contains($0.name.lowercased()) } + replacing
        result.requestTime = requestTime
        result.responseTime = responseTime
        return result
    }

    /// Whether a 304 is about `stored` (section 4.3.4): the same entity tag (strong, or weak:
    /// then the most recent of the matching responses, which the caller checks first), else
    /// the same `Last-Modified`, else (neither in the 304) any stored response of the key.
    static func notModified(_ notModified: Fields, matches stored: Stored) -> Bool {
        if let tag = HeaderFieldNames.first("ETag", in: notModified) {
            return HeaderFieldNames.first("ETag", in: stored.fields) == tag
        }
        if let modified = HeaderFieldNames.first("Last-Modified", in: notModified) {
            return HeaderFieldNames.first("Last-Modified", in: stored.fields) == modified
        }
        return true
    }

    // MARK: Invalidation (section 4.4)

    /// Methods that never invalidate.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// The URLs whose stored responses a response to `method` on `url` invalidates: for an
    /// unsafe method answered 2xx or 3xx, the URL itself and those of `Location` and
    /// `Content-Location` on its origin (resolved against it).
    static func invalidated(method: String, url: String, status: Int, responseFields: Fields) -> [String] {
        guard !safeMethods.contains(method), (200..<400).contains(status) else { return [] }
        var urls = [url]
        for name in ["Location", "Content-Location"] {
            guard let reference = HeaderFieldNames.first(name, in: responseFields),
                  let resolved = HTTPURL(reference, relativeTo: url),
                  resolved.origin == HTTPURL(url)?.origin else { continue }
            urls.append(resolved.cacheKey)
        }
        return urls
    }
}
