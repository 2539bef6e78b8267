@testable import CurlXHR
import Testing

/// The cache's decisions for one send, event by event, without a store or a network: the
/// plan from the request, its policy and what is stored; then what a final head does.
@Suite(.ownThreads) struct CacheDecisionTests {
    static let now = 1_800_000_000.0
    static let date = "Fri, 15 Jan 2027 08:00:00 GMT"  // now

    static func entry(_ fields: CacheRules.Fields, vary: [String] = [], values: [String?] = [], decoded: Bool = false,
                      age: Double = 0, bodySize: Int64 = 0) -> CacheStore.Entry {
        var entry = CacheStore.Entry(key: "http://h/r", varyNames: vary, varyValues: values,
                                     stored: CacheRules.Stored(status: 200, fields: [("Date", date)] + fields, requestTime: now - age, responseTime: now - age),
                                     reason: "OK", httpVersion: "HTTP/1.1", decoded: decoded)
        entry.bodySize = bodySize
        return entry
    }

    static func request(_ method: String = "GET", _ fields: CacheRules.Fields = [], policy: HttpRequest.CachePolicy = .default,
                        range: Bool = false, decodes: Bool = true, rangeField: String? = nil) -> CacheDecision.Request {
        CacheDecision.Request(method: method, fields: fields, policy: policy, range: range || rangeField != nil, decodes: decodes,
                              rangeField: rangeField)
    }

    /// A plan in words, for comparing.
    static func said(_ plan: CacheDecision.Plan) -> String {
        switch plan {
        case .forward(let store, let freshens): "forward store=\(store)" + (freshens == nil ? "" : " freshens")
        case .serve(_, let age, let notModified): "serve age=\(age)" + (notModified ? " as 304" : "")
        case .servePart(_, let age, let part): "serve bytes \(part.lowerBound)-\(part.upperBound) age=\(age)"
        case .validate(_, let conditions, let store): "validate \(conditions.map(\.name).joined(separator: ",")) store=\(store)"
        case .gatewayTimeout: "504"
        case .offlineMiss: "offline miss"
        }
    }

    static func plan(_ request: CacheDecision.Request, _ stored: [CacheStore.Entry], at time: Double = now) -> String {
        said(CacheDecision.plan(request, candidates: stored, now: time))
    }

    @Test func aGetFromMissToHitToValidation() {
        let fresh = Self.entry([("Cache-Control", "max-age=60"), ("ETag", "\"a\"")])
        #expect(Self.plan(Self.request(), []) == "forward store=true")
        #expect(Self.plan(Self.request(), [fresh], at: Self.now + 10) == "serve age=10")
        #expect(Self.plan(Self.request(), [fresh], at: Self.now + 61) == "validate If-None-Match,Cache-Control store=true")
        // The validation's 304 answers from the store, updated; a 200 is delivered and stored.
        let validating = CacheDecision.plan(Self.request(), candidates: [fresh], now: Self.now + 61)
        let notModified = CacheDecision.head(validating, request: Self.request(), status: 304,
                                             fields: [("ETag", "\"a\""), ("X-New", "1")], requestTime: Self.now + 61, responseTime: Self.now + 62)
        guard case .replayStored(let updated) = notModified else {
            Issue.record("a matching 304 is the cache's: \(notModified)")
            return
        }
        #expect(HeaderFieldNames.first("X-New", in: updated.fields) == "1" && updated.responseTime == Self.now + 62)
        let changed = CacheDecision.head(validating, request: Self.request(), status: 200, fields: [("ETag", "\"b\""), ("Cache-Control", "max-age=60")],
                                         requestTime: Self.now + 61, responseTime: Self.now + 62)
        #expect(changed == .deliver(store: true))
        // A 304 for another tag is not about the stored response: it goes to the caller.
        let other = CacheDecision.head(validating, request: Self.request(), status: 304, fields: [("ETag", "\"z\"")],
                                       requestTime: Self.now + 61, responseTime: Self.now + 62)
        #expect(other == .deliver(store: false))
    }

    @Test func policies() {
        let stale = Self.entry([("Cache-Control", "max-age=1"), ("ETag", "\"a\"")], age: 100)
        #expect(Self.plan(Self.request(policy: []), [stale]) == "forward store=false")
        #expect(Self.plan(Self.request(policy: [.update]), [stale]) == "forward store=true")
        #expect(Self.plan(Self.request(policy: [.read]), [stale]) == "validate If-None-Match,Cache-Control store=false")
        #expect(Self.plan(Self.request(policy: [.readForced]), [stale]) == "serve age=100")
        #expect(Self.plan(Self.request(policy: [.readForced, .read, .update]), []) == "offline miss")
        // Offline, what a cache never answers fails rather than goes out.
        #expect(Self.plan(Self.request("POST", policy: [.readForced]), [stale]) == "offline miss")
        #expect(Self.plan(Self.request(policy: [.readForced], range: true), [stale]) == "offline miss")
        // updateForced stores what the headers would not let the cache store.
        let forward = CacheDecision.plan(Self.request(policy: [.read, .updateForced]), candidates: [], now: Self.now)
        #expect(CacheDecision.head(forward, request: Self.request(policy: [.read, .updateForced]), status: 200,
                                   fields: [("Cache-Control", "no-store")], requestTime: Self.now, responseTime: Self.now) == .deliver(store: true))
        #expect(CacheDecision.head(forward, request: Self.request(policy: [.read, .update]), status: 200,
                                   fields: [("Cache-Control", "no-store")], requestTime: Self.now, responseTime: Self.now) == .deliver(store: false))
    }

    @Test func requestsTheCacheLeavesToTheNetwork() {
        let fresh = Self.entry([("Cache-Control", "max-age=60")])
        #expect(Self.plan(Self.request("POST"), [fresh]) == "forward store=false")
        #expect(Self.plan(Self.request("PUT"), [fresh]) == "forward store=false")
        #expect(Self.plan(Self.request(range: true), [fresh]) == "forward store=false")
        #expect(Self.plan(Self.request("HEAD"), [fresh]) == "serve age=0")
        #expect(Self.plan(Self.request("HEAD"), []) == "forward store=false")
        // A body kept decoded cannot answer a request that wants it as sent.
        let decoded = Self.entry([("Cache-Control", "max-age=60"), ("Content-Encoding", "gzip")], decoded: true)
        #expect(Self.plan(Self.request(decodes: false), [decoded]) == "forward store=true")
        #expect(Self.plan(Self.request(decodes: true), [decoded]) == "serve age=0")
    }

    @Test func varyPicksTheVariantOfTheRequest() {
        let french = Self.entry([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], vary: ["accept-language"], values: ["fr"])
        let none = Self.entry([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], vary: ["accept-language"], values: [nil])
        #expect(Self.plan(Self.request("GET", [("Accept-Language", "fr")]), [french, none]) == "serve age=0")
        #expect(Self.plan(Self.request("GET", []), [french, none]) == "serve age=0")
        #expect(Self.plan(Self.request("GET", [("Accept-Language", "en")]), [french, none]) == "forward store=true")
    }

    @Test func theCallersOwnConditionsAndOnlyIfCached() {
        let fresh = Self.entry([("Cache-Control", "max-age=60"), ("ETag", "W/\"a\""), ("Last-Modified", "Thu, 14 Jan 2027 08:00:00 GMT")])
        let stale = Self.entry([("Cache-Control", "max-age=60"), ("ETag", "\"a\"")], age: 100)
        #expect(Self.plan(Self.request("GET", [("If-None-Match", "\"a\"")]), [fresh]) == "serve age=0 as 304")
        #expect(Self.plan(Self.request("GET", [("If-None-Match", "\"b\", *")]), [fresh]) == "serve age=0 as 304")
        #expect(Self.plan(Self.request("GET", [("If-None-Match", "\"b\"")]), [fresh]) == "serve age=0")
        #expect(Self.plan(Self.request("GET", [("If-Modified-Since", "Thu, 14 Jan 2027 09:00:00 GMT")]), [fresh]) == "serve age=0 as 304")
        #expect(Self.plan(Self.request("GET", [("If-Modified-Since", "Wed, 13 Jan 2027 09:00:00 GMT")]), [fresh]) == "serve age=0")
        // Stale: the caller's conditions go as they are, and their 304 freshens the store.
        #expect(Self.plan(Self.request("GET", [("If-None-Match", "\"a\"")]), [stale]) == "forward store=true freshens")
        #expect(Self.plan(Self.request("GET", [("Cache-Control", "only-if-cached")]), [stale]) == "504")
        #expect(Self.plan(Self.request("GET", [("Cache-Control", "only-if-cached")]), []) == "504")
        #expect(Self.plan(Self.request("GET", [("Cache-Control", "only-if-cached, max-stale")]), [stale]) == "serve age=100")
    }

    @Test func aValidationAsksCachesOnTheWayNotToAnswerFromTheirCopy() {
        let stale = Self.entry([("Cache-Control", "max-age=2, immutable"), ("ETag", "\"abcd\"")], age: 4)
        let plan = CacheDecision.plan(Self.request(), candidates: [stale], now: Self.now)
        guard case .validate(_, let conditions, _) = plan else {
            Issue.record("a stale response with a tag is validated: \(Self.said(plan))")
            return
        }
        #expect(conditions.map { "\($0.name): \($0.value)" } == ["If-None-Match: \"abcd\"", "Cache-Control: max-age=0"])
        // The caller's own directives go as they are.
        #expect(Self.plan(Self.request("GET", [("Cache-Control", "max-stale=1")]), [stale]) == "validate If-None-Match store=true")
        // Nothing to validate with: fetched again plainly.
        #expect(Self.plan(Self.request(), [Self.entry([("Cache-Control", "max-age=2")], age: 4)]) == "forward store=true")
    }

    @Test func anExpiresThatIsNoHTTPDateIsValidatedAtOnce() {
        for expires in ["Fri, 15 Jan 2027 09:00:00 UTC", "Fri, 15 Jan 27 09:00:00 GMT", "Fri 15 Jan 2027 09:00:00 GMT",
                        "Fri, 15  Jan  2027 09:00:00 GMT", "Fri, 15-Jan-2027 09:00:00 GMT", "Fri, 15 Jan 2027 9:00:00 GMT",
                        "Fri, 15 Jan 2027 09:00:00 GMT\u{0}", "0", "-1"] {
            let entry = Self.entry([("Expires", expires), ("ETag", "\"a\"")])
            #expect(Self.plan(Self.request(), [entry], at: Self.now + 1) == "validate If-None-Match,Cache-Control store=true", "\(expires)")
        }
        let valid = Self.entry([("Expires", "Fri, 15 Jan 2027 09:00:00 GMT"), ("ETag", "\"a\"")])
        #expect(Self.plan(Self.request(), [valid], at: Self.now + 1) == "serve age=1")
    }

    @Test func theFirstAgeCounts() {
        let old = Self.entry([("Cache-Control", "max-age=3600"), ("Age", "7200, 0"), ("ETag", "\"a\"")])
        let young = Self.entry([("Cache-Control", "max-age=3600"), ("Age", "0, 7200"), ("ETag", "\"a\"")])
        #expect(Self.plan(Self.request(), [old], at: Self.now + 1) == "validate If-None-Match,Cache-Control store=true")
        #expect(Self.plan(Self.request(), [young], at: Self.now + 1) == "serve age=1")
    }

    @Test func staleWhileRevalidateServesWithinItsWindowOnly() {
        // The suite's stale-while-revalidate-window: max-age=1, a window of 4 s.
        let entry = Self.entry([("Cache-Control", "max-age=1, stale-while-revalidate=4"), ("ETag", "\"abc\"")])
        #expect(Self.plan(Self.request(), [entry], at: Self.now + 0.5) == "serve age=0")
        #expect(Self.plan(Self.request(), [entry], at: Self.now + 3) == "serve age=3")
        #expect(Self.plan(Self.request(), [entry], at: Self.now + 5) == "serve age=5")
        #expect(Self.plan(Self.request(), [entry], at: Self.now + 6) == "validate If-None-Match,Cache-Control store=true")
        // The caller's no-cache still validates.
        #expect(Self.plan(Self.request("GET", [("Cache-Control", "no-cache")]), [entry], at: Self.now + 3)
            == "validate If-None-Match store=true")
    }

    @Test func aRangeIsAnsweredFromAFreshCompleteResponse() {
        let whole = Self.entry([("Cache-Control", "max-age=3600"), ("A", "1")], bodySize: 11)
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1"), [whole]) == "serve bytes 0-1 age=0")
        #expect(Self.plan(Self.request(rangeField: "bytes=-3"), [whole], at: Self.now + 5) == "serve bytes 8-10 age=5")
        #expect(Self.plan(Self.request(rangeField: "bytes=5-"), [whole]) == "serve bytes 5-10 age=0")
        // Its head: a 206 with the part's range and length, the stored fields kept.
        let plan = CacheDecision.plan(Self.request(rangeField: "bytes=0-1"), candidates: [whole], now: Self.now)
        #expect(CacheDecision.head(plan, request: Self.request(rangeField: "bytes=0-1"), status: 206, fields: [],
                                   requestTime: Self.now, responseTime: Self.now) == .deliver(store: false))
        // What it cannot answer goes to the server, and is not stored.
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1"), []) == "forward store=false")
        #expect(Self.plan(Self.request(rangeField: "bytes=11-"), [whole]) == "forward store=false")
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1,4-5"), [whole]) == "forward store=false")
        #expect(Self.plan(Self.request(range: true), [whole]) == "forward store=false")  // setRange, or with If-Range
        #expect(Self.plan(Self.request("HEAD", rangeField: "bytes=0-1"), [whole]) == "forward store=false")
        #expect(Self.plan(Self.request(policy: [.update], rangeField: "bytes=0-1"), [whole]) == "forward store=false")
        #expect(Self.plan(Self.request("GET", [("If-None-Match", "\"x\"")], rangeField: "bytes=0-1"), [whole]) == "forward store=false")
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1"), [whole], at: Self.now + 3601) == "forward store=false")
        let encoded = Self.entry([("Cache-Control", "max-age=3600"), ("Content-Encoding", "gzip")], bodySize: 11)
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1"), [encoded]) == "forward store=false")
        let decoded = Self.entry([("Cache-Control", "max-age=3600"), ("Content-Encoding", "gzip")], decoded: true, bodySize: 11)
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1"), [decoded]) == "forward store=false")
        let empty = Self.entry([("Cache-Control", "max-age=3600")], bodySize: 0)
        #expect(Self.plan(Self.request(rangeField: "bytes=0-1"), [empty]) == "forward store=false")
    }
}
