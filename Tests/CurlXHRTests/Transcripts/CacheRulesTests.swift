@testable import CurlXHR
import Testing

/// RFC 9111's rules (``CacheRules``, ``CacheControl``, ``CacheKeys``) as tables: each row a
/// stored response, a request and a time, and what the rules decide.
@Suite struct CacheRulesTests {
    typealias Fields = CacheRules.Fields
    /// Tue, 14 Nov 2023 22:13:20 GMT.
    static let t0 = 1_700_000_000.0
    static let date0 = "Tue, 14 Nov 2023 22:13:20 GMT"
    static let dateMinus100 = "Tue, 14 Nov 2023 22:11:40 GMT"
    static let datePlus3600 = "Tue, 14 Nov 2023 23:13:20 GMT"
    static let dateMinus10Days = "Sat, 04 Nov 2023 22:13:20 GMT"

    func stored(_ fields: Fields, status: Int = 200, requestTime: Double = t0, responseTime: Double = t0) -> CacheRules.Stored {
        CacheRules.Stored(status: status, fields: fields, requestTime: requestTime, responseTime: responseTime)
    }

    // MARK: Cache-Control

    @Test func directivesAreParsedAsTheRFCWritesThem() {
        let control = CacheControl([("Cache-Control", "Max-Age=60, no-cache=\"Set-Cookie, X-A\""), ("cache-control", " private ,must-revalidate")])
        #expect(control.directives.map(\.name) == ["max-age", "no-cache", "private", "must-revalidate"])
        #expect(control.seconds("max-age") == .valid(60))
        #expect(control.argument("no-cache") == "Set-Cookie, X-A")
        #expect(CacheControl(parsing: "max-age=\"30\"").seconds("max-age") == .valid(30))
        #expect(CacheControl(parsing: "max-age=abc").seconds("max-age") == .invalid)
        #expect(CacheControl(parsing: "max-age").seconds("max-age") == .invalid)
        #expect(CacheControl(parsing: "max-age=-1").seconds("max-age") == .invalid)
        #expect(CacheControl(parsing: "max-age=10, max-age=20").seconds("max-age") == .invalid)
        #expect(CacheControl(parsing: "max-age=10, max-age=10").seconds("max-age") == .valid(10))
        #expect(CacheControl(parsing: "max-age=99999999999999999999").seconds("max-age") == .valid(1 << 31))
        #expect(CacheControl(parsing: "no-store").seconds("max-age") == .absent)
        #expect(CacheControl(parsing: " , ,public,, ").directives.map(\.name) == ["public"])
        #expect(CacheControl(parsing: "a=\"x\\\"y\", b").directives == [.init(name: "a", argument: "x\"y"), .init(name: "b", argument: nil)])
    }

    // MARK: Storing

    @Test(arguments: [
        // (method, request fields, status, response fields, storable)
        ("GET", [], 200, [], true),                                            // heuristically cacheable
        ("GET", [], 201, [], false),                                           // not without freshness
        ("GET", [], 201, [("Cache-Control", "max-age=60")], true),
        ("GET", [], 201, [("Expires", datePlus3600)], true),
        ("GET", [], 201, [("Cache-Control", "public")], true),
        ("GET", [], 201, [("Cache-Control", "private")], true),                // a private cache stores it
        ("GET", [], 200, [("Cache-Control", "no-store")], false),
        ("GET", [("Cache-Control", "no-store")], 200, [("Cache-Control", "max-age=60")], false),
        ("GET", [], 200, [("Cache-Control", "no-store, must-understand")], true),
        ("GET", [], 299, [("Cache-Control", "no-store, must-understand, max-age=60")], false),
        ("GET", [], 206, [("Cache-Control", "max-age=60")], false),
        ("GET", [], 304, [("Cache-Control", "max-age=60")], false),
        ("POST", [], 200, [("Cache-Control", "max-age=60")], false),
        ("HEAD", [], 200, [("Cache-Control", "max-age=60")], false),
        ("GET", [], 200, [("Vary", "Accept, *")], false),
        ("GET", [("Authorization", "Basic eA==")], 200, [("Cache-Control", "max-age=60")], false),
        ("GET", [("Authorization", "Basic eA==")], 200, [("Cache-Control", "max-age=60, must-revalidate")], true),
        ("GET", [("Authorization", "Basic eA==")], 200, [("Cache-Control", "public")], true),
        ("GET", [], 200, [("Cache-Control", "no-cache")], true),                // stored, validated each time
    ] as [(String, Fields, Int, Fields, Bool)])
    func storability(method: String, request: Fields, status: Int, response: Fields, storable: Bool) {
        #expect(CacheRules.isStorable(method: method, requestFields: request, status: status, responseFields: response) == storable)
    }

    // MARK: Freshness and age

    @Test(arguments: [
        // (status, response fields, lifetime, heuristic)
        (200, [("Cache-Control", "max-age=60"), ("Expires", datePlus3600), ("Date", date0)], 60.0, false),  // max-age wins
        (200, [("Cache-Control", "max-age=junk"), ("Expires", datePlus3600), ("Date", date0)], 0.0, false),
        (200, [("Expires", datePlus3600), ("Date", date0)], 3600.0, false),
        (200, [("Expires", datePlus3600)], 3600.0, false),                     // against the arrival time
        (200, [("Expires", "0"), ("Date", date0)], 0.0, false),                // not a date: in the past
        (200, [("Expires", dateMinus100), ("Date", date0)], 0.0, false),
        (200, [("Last-Modified", dateMinus10Days), ("Date", date0)], 86_400.0, true),  // a tenth of 10 days
        (201, [("Last-Modified", dateMinus10Days), ("Date", date0)], 0.0, false),     // not heuristically cacheable
        (201, [("Last-Modified", dateMinus10Days), ("Date", date0), ("Cache-Control", "public")], 86_400.0, true),
        (200, [("Date", date0)], 0.0, false),
        (200, [("Cache-Control", "s-maxage=60")], 0.0, false),                 // for shared caches only
    ] as [(Int, Fields, Double, Bool)])
    func freshnessLifetime(status: Int, fields: Fields, lifetime: Double, heuristic: Bool) {
        let result = CacheRules.freshnessLifetime(stored(fields, status: status))
        #expect(result.seconds == lifetime && result.heuristic == heuristic)
    }

    @Test func theCurrentAgeCountsAgeDateTheResponseDelayAndTheTimeKept() {
        // Arrived at t0 for a request sent 2 s before; kept 10 s.
        #expect(CacheRules.currentAge(stored([("Date", Self.date0)], requestTime: Self.t0 - 2), now: Self.t0 + 10) == 12)
        // Age from an upstream cache adds to it.
        #expect(CacheRules.currentAge(stored([("Date", Self.date0), ("Age", "30")]), now: Self.t0 + 10) == 40)
        // A Date 100 s before the arrival: the apparent age.
        #expect(CacheRules.currentAge(stored([("Date", Self.dateMinus100)]), now: Self.t0) == 100)
        // An Age that is not a number is ignored.
        #expect(CacheRules.currentAge(stored([("Date", Self.date0), ("Age", "soon")]), now: Self.t0 + 5) == 5)
    }

    // MARK: Reuse

    @Test(arguments: [
        // (response fields, request fields, seconds after arrival, decision)
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [], 30.0, "fresh 30"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [], 61.0, "validate"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "no-cache")], 1.0, "validate"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Pragma", "no-cache")], 1.0, "validate"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Pragma", "no-cache"), ("Cache-Control", "max-stale")], 1.0, "fresh 1"),
        ([("Cache-Control", "no-cache, max-age=60"), ("Date", date0)], [], 1.0, "validate"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "max-age=10")], 11.0, "validate"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "max-age=10")], 9.0, "fresh 9"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "min-fresh=30")], 31.0, "validate"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "min-fresh=30")], 29.0, "fresh 29"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "max-stale")], 600.0, "stale 600"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "max-stale=100")], 150.0, "stale 150"),
        ([("Cache-Control", "max-age=60"), ("Date", date0)], [("Cache-Control", "max-stale=100")], 170.0, "validate"),
        ([("Cache-Control", "max-age=60, must-revalidate"), ("Date", date0)], [("Cache-Control", "max-stale")], 61.0, "validate"),
        ([("Expires", datePlus3600), ("Date", date0)], [], 3599.0, "fresh 3599"),
        ([("Last-Modified", dateMinus10Days), ("Date", date0)], [], 86_000.0, "fresh 86000"),
        ([("Date", date0)], [], 0.0, "validate"),
    ] as [(Fields, Fields, Double, String)])
    func reuse(response: Fields, request: Fields, after seconds: Double, decision: String) {
        let said = switch CacheRules.reuse(stored(response), requestFields: request, now: Self.t0 + seconds) {
        case .fresh(let age): "fresh \(age)"
        case .stale(let age): "stale \(age)"
        case .validate: "validate"
        }
        #expect(said == decision)
    }

    // MARK: Validation and updates

    @Test func aStoredResponseIsValidatedWithItsEntityTagAndDate() {
        let both = stored([("ETag", "\"v1\""), ("Last-Modified", Self.dateMinus10Days)])
        #expect(CacheRules.validation(for: both).map { "\($0.name): \($0.value)" }
            == ["If-None-Match: \"v1\"", "If-Modified-Since: \(Self.dateMinus10Days)"])
        #expect(CacheRules.validation(for: stored([("Cache-Control", "max-age=1")])).isEmpty)
    }

    @Test func a304ReplacesTheFieldsItCarriesButNotThoseTheBodyDependsOn() {
        let before = stored([("Content-Type", "text/plain"), ("Content-Length", "5"), ("ETag", "\"v1\""),
                             ("Cache-Control", "max-age=10"), ("X-Kept", "a"), ("Content-Encoding", "gzip")])
        let after = CacheRules.updated(before, by: [("Cache-Control", "max-age=100"), ("Content-Length", "0"), ("ETag", "\"v1\""),
                                                    ("Connection", "X-Hop"), ("X-Hop", "1"), ("Content-Encoding", "br"), ("Date", Self.datePlus3600)],
                                       requestTime: Self.t0 + 50, responseTime: Self.t0 + 51)
        #expect(after.fields.map { "\($0.name): \($0.value)" } == ["Content-Type: text/plain", "Content-Length: 5", "X-Kept: a",
                                                                   "Content-Encoding: gzip", "Cache-Control: max-age=100", "ETag: \"v1\"",
                                                                   "Date: \(Self.datePlus3600)"])
        #expect(after.requestTime == Self.t0 + 50 && after.responseTime == Self.t0 + 51)
    }

    @Test func hopByHopAndConnectionListedFieldsAreNotStored() {
        let kept = CacheRules.storedFields([("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
                                            ("Transfer-Encoding", "chunked"), ("Proxy-Authenticate", "Basic"), ("ETag", "\"a\""),
                                            ("X-Kept", "2")])
        #expect(kept.map(\.name) == ["ETag", "X-Kept"])
    }

    @Test func a304IsMatchedToAStoredResponseByItsTagThenItsDate() {
        let tagged = stored([("ETag", "\"v1\""), ("Last-Modified", Self.dateMinus10Days)])
        #expect(CacheRules.notModified([("ETag", "\"v1\"")], matches: tagged))
        #expect(!CacheRules.notModified([("ETag", "\"v2\"")], matches: tagged))
        #expect(!CacheRules.notModified([("ETag", "W/\"v1\"")], matches: tagged))
        #expect(CacheRules.notModified([("ETag", "W/\"v1\"")], matches: stored([("ETag", "W/\"v1\"")])))
        #expect(CacheRules.notModified([("Last-Modified", Self.dateMinus10Days)], matches: tagged))
        #expect(!CacheRules.notModified([("Last-Modified", Self.date0)], matches: tagged))
        #expect(CacheRules.notModified([], matches: tagged))
    }

    // MARK: Invalidation and keys

    @Test func anUnsafeMethodsSuccessInvalidatesItsURLAndSameOriginLocations() {
        let url = "http://example.com/items/7"
        #expect(CacheRules.invalidated(method: "POST", url: url, status: 201,
                                       responseFields: [("Location", "/items/8"), ("Content-Location", "http://other.example/x")])
            == ["http://example.com/items/7", "http://example.com/items/8"])
        #expect(CacheRules.invalidated(method: "DELETE", url: url, status: 303, responseFields: []) == [url])
        #expect(CacheRules.invalidated(method: "PURGE", url: url, status: 200, responseFields: []) == [url])  // unknown: unsafe
        #expect(CacheRules.invalidated(method: "PUT", url: url, status: 500, responseFields: []).isEmpty)
        #expect(CacheRules.invalidated(method: "GET", url: url, status: 200, responseFields: []).isEmpty)
    }

    @Test func keysDropTheFragmentAndVaryComparesNormalizedValues() {
        #expect(CacheKeys.primary("HTTP://Example.com:80/a?b=1#frag") == CacheKeys.primary("http://example.com/a?b=1"))
        #expect(CacheKeys.primary("not a url") == nil)
        #expect(CacheKeys.varyNames([("Vary", "Accept-Encoding, accept-language"), ("Vary", "Accept-Encoding")])
            == ["accept-encoding", "accept-language"])
        #expect(CacheKeys.varyValues(["accept-language", "x-absent"], in: [("Accept-Language", "en , fr")]) == ["en,fr", nil])
        #expect(HTTPURL("../b#x", relativeTo: "http://h/a/c")?.cacheKey == "http://h/b")
    }
}
