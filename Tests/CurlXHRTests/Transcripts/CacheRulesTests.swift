@testable import CurlXHR
import Testing

/// RFC 9111's rules (``CacheRules``, ``CacheControl``, ``CacheKeys``) as tables: each row a
/// stored response, a request and a time, and what the rules decide.
@Suite(.ownThreads) struct CacheRulesTests {
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

    /// RFC 9111, section 5.3: an `Expires` that is not an HTTP-date (RFC 9110, 5.6.7) as the
    /// grammar writes it means the response is already stale; names in any case still count.
    @Test(arguments: [
        // (Expires fields, lifetime against Date date0)
        ([datePlus3600], 3600.0),
        (["  \(datePlus3600)\t"], 3600.0),                                      // the field's spaces are not the value's
        (["TUE, 14 NOV 2023 23:13:20 gmt"], 3600.0),                           // names in any case
        (["Tuesday, 14-Nov-23 23:13:20 GMT"], 3600.0),                         // RFC 850, the year within 50 years
        (["Tue Nov 14 23:13:20 2023"], 3600.0),                                // asctime
        (["Fri Dec  1 22:13:20 2023"], 1_468_800.0),                           // asctime, a one-digit day
        ([datePlus3600, datePlus3600], 3600.0),                                // the same twice
        (["Tue, 14 Nov 2023 23:13:20 UTC"], 0.0),
        (["Tue, 14 Nov 2023 23:13:20 AEST"], 0.0),
        (["Tue, 14 Nov 23 23:13:20 GMT"], 0.0),                                // a two-digit year in IMF-fixdate
        (["Tue 14 Nov 2023 23:13:20 GMT"], 0.0),                               // no comma
        (["Tue, 14  Nov  2023 23:13:20 GMT"], 0.0),                            // two spaces
        (["Tue, 14-Nov-2023 23:13:20 GMT"], 0.0),                              // dashes
        (["Tue, 14 Nov 2023 23.13.20 GMT"], 0.0),                              // periods
        (["Tue, 14 Nov 2023 3:13:20 GMT"], 0.0),                               // a one-digit hour
        (["Tue, 14 Nov 2023 3:13:20 GMT", "Tue, 14 Nov 2023 3:13:21 GMT"], 0.0),
        ([datePlus3600, "Tue, 14 Nov 2023 23:13:21 GMT"], 0.0),                // two that disagree
        (["Tue, 14 Nov 2023 24:00:00 GMT"], 0.0),                              // no hour 24
        (["Tue, 31 Nov 2023 23:13:20 GMT"], 0.0),                              // November has 30 days
        (["Tue, 14 Nov 2023 23:13:20 GMT\u{0}"], 0.0),                         // NUL
        (["\u{0}Tue, 14 Nov 2023 23:13:20 GMT"], 0.0),
        (["Tue, 14 Nov 2023 23:13:20 GMTT"], 0.0),
        (["Tüe, 14 Nov 2023 23:13:20 GMT"], 0.0),
        (["Tue, 14 Nov 2023 23:13:20 GMT" + String(repeating: " x", count: 5000)], 0.0),
        (["-1"], 0.0), (["0"], 0.0), ([""], 0.0), (["1700003600"], 0.0),
    ] as [([String], Double)])
    func anInvalidExpiresIsAlreadyExpired(expires: [String], lifetime: Double) {
        let fields: Fields = expires.map { ("Expires", $0) } + [("Date", Self.date0)]
        #expect(CacheRules.freshnessLifetime(stored(fields)).seconds == lifetime)
        // And so the response is validated (the suite's freshness-expires-invalid-*).
        let decision = CacheRules.reuse(stored(fields), requestFields: [], now: Self.t0 + 1)
        #expect(decision == (lifetime > 0 ? .fresh(age: 1) : .validate))
    }

    @Test func httpDatesInTheirThreeFormsNameTheSameSecond() {
        let reference = Self.t0  // November 2023
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 GMT", reference: reference) == 784_111_777)
        #expect(HTTPDate.seconds("Sunday, 06-Nov-94 08:49:37 GMT", reference: reference) == 784_111_777)
        #expect(HTTPDate.seconds("Sun Nov  6 08:49:37 1994", reference: reference) == 784_111_777)
        #expect(HTTPDate.seconds(Self.date0, reference: 0) == Self.t0)
        // Two-digit years: within 50 years of the reference, else a century back.
        #expect(HTTPDate.seconds("Thursday, 18-Aug-50 02:01:18 GMT", reference: reference) == 2_544_400_878)
        #expect(HTTPDate.fullYear(73, reference: reference) == 2073 && HTTPDate.fullYear(74, reference: reference) == 1974)
        #expect(HTTPDate.fullYear(0, reference: 0) == 2000 && HTTPDate.fullYear(20, reference: 0) == 2020 && HTTPDate.fullYear(21, reference: 0) == 1921)
        #expect(HTTPDate.fullYear(50, reference: .infinity) == 1950 && HTTPDate.fullYear(50, reference: -.infinity) == 1950)
        // Beyond 32 bits, leap days, and the day of the week not checked.
        #expect(HTTPDate.seconds("Sun, 21 Nov 2286 04:46:39 GMT", reference: reference) == 10_000_039_599)
        #expect(HTTPDate.seconds("Thu, 29 Feb 2024 00:00:00 GMT", reference: reference) == 1_709_164_800)
        #expect(HTTPDate.seconds("Wed, 29 Feb 2023 00:00:00 GMT", reference: reference) == nil)
        #expect(HTTPDate.seconds("Mon, 01 Jan 1970 00:00:00 GMT", reference: reference) == 0)
        #expect(HTTPDate.seconds("Fri, 31 Dec 1969 23:59:60 GMT", reference: reference) == 0)  // a leap second
        #expect(HTTPDate.seconds("Monday, 06-Nov-1994 08:49:37 GMT", reference: reference) == nil)
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37", reference: reference) == nil)
        #expect(HTTPDate.seconds("Sun Nov 6 08:49:37 1994", reference: reference) == nil)
        #expect(HTTPDate.seconds("Funday, 06-Nov-94 08:49:37 GMT", reference: reference) == nil)
        #expect(HTTPDate.seconds(",", reference: reference) == nil && HTTPDate.seconds("Sun", reference: reference) == nil)
    }

    /// RFC 9111, section 5.1: `Age` is delta-seconds; of a list (in one field or several) the
    /// first member counts; anything else is no `Age`.
    @Test(arguments: [
        // (Age fields, value)
        (["7200"], 7200), ([" 30 "], 30), (["0"], 0), (["007"], 7),
        (["7200, 0"], 7200), (["0, 7200"], 0), (["7200", "0"], 7200), (["0", "7200"], 0),
        (["7200;foo=bar"], 7200), (["7200 ;foo=111"], 7200),
        (["2147483647"], 2_147_483_647), (["2147483648"], 1 << 31), (["99999999999999999999999999"], 1 << 31),
        (["-7200"], nil), (["7200.0"], nil), (["abc"], nil), (["7200abc"], nil), ([""], nil), ([", 7200"], nil),
        (["\u{0}7200"], nil), (["72\u{0}00"], nil), (["+7200"], nil), (["٧٢٠٠"], nil),
    ] as [([String], Int?)])
    func theAgeFieldsValue(ages: [String], value: Int?) {
        #expect(CacheRules.ageValue(ages.map { ("Age", $0) }) == value)
    }

    @Test func anAgeOfAnHourOrMoreMakesAnHoursMaxAgeStale() {
        // The suite's age-parse-*: max-age=3600 with these Age fields, a moment after arrival.
        func decision(_ ages: [String]) -> CacheRules.Reuse {
            CacheRules.reuse(stored([("Date", Self.date0), ("Cache-Control", "max-age=3600")] + ages.map { ("Age", $0) }),
                             requestFields: [], now: Self.t0 + 1)
        }
        #expect(decision(["7200, 0"]) == .validate)
        #expect(decision(["7200", "0"]) == .validate)
        #expect(decision(["7200;foo=bar"]) == .validate)
        #expect(decision(["2147483648"]) == .validate)
        #expect(decision(["0, 7200"]) == .fresh(age: 1))
        #expect(decision(["-7200"]) == .fresh(age: 1))
        #expect(decision(["7200.0"]) == .fresh(age: 1))
        #expect(decision(["99999999999999999999999999"]) == .validate)
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
        // stale-while-revalidate (RFC 5861): served stale within the window after max-age.
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", date0)], [], 59.0, "fresh 59"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", date0)], [], 80.0, "while revalidating 80"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", date0)], [], 90.0, "while revalidating 90"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", date0)], [], 91.0, "validate"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30, must-revalidate"), ("Date", date0)], [], 80.0, "validate"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30, no-cache"), ("Date", date0)], [], 80.0, "validate"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", date0)], [("Cache-Control", "max-age=70")], 80.0, "validate"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("Date", date0)], [("Cache-Control", "max-stale=100")], 120.0, "stale 120"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=-1"), ("Date", date0)], [], 61.0, "validate"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate"), ("Date", date0)], [], 61.0, "validate"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=99999999999999999999"), ("Date", date0)], [], 1e9, "while revalidating 1000000000"),
        ([("Cache-Control", "max-age=60, stale-while-revalidate=10"), ("Date", date0), ("Age", "65")], [], 0.0, "while revalidating 65"),
    ] as [(Fields, Fields, Double, String)])
    func reuse(response: Fields, request: Fields, after seconds: Double, decision: String) {
        let said = switch CacheRules.reuse(stored(response), requestFields: request, now: Self.t0 + seconds) {
        case .fresh(let age): "fresh \(age)"
        case .stale(let age): "stale \(age)"
        case .staleWhileRevalidate(let age): "while revalidating \(age)"
        case .validate: "validate"
        }
        #expect(said == decision)
    }

    // MARK: Validation and updates

    @Test func aStoredResponseIsValidatedWithItsEntityTagAndDate() {
        let both = stored([("ETag", "\"v1\""), ("Last-Modified", Self.dateMinus10Days)])
        // With max-age=0, so that no cache on the way answers from its own copy.
        #expect(CacheRules.validation(for: both, requestFields: []).map { "\($0.name): \($0.value)" }
            == ["If-None-Match: \"v1\"", "If-Modified-Since: \(Self.dateMinus10Days)", "Cache-Control: max-age=0"])
        // The request's own Cache-Control or Pragma stays as it is, alone.
        #expect(CacheRules.validation(for: both, requestFields: [("cache-control", "max-stale=5")]).map(\.name)
            == ["If-None-Match", "If-Modified-Since"])
        #expect(CacheRules.validation(for: both, requestFields: [("Pragma", "no-cache")]).map(\.name)
            == ["If-None-Match", "If-Modified-Since"])
        #expect(CacheRules.validation(for: stored([("Cache-Control", "max-age=1")]), requestFields: []).isEmpty)
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

    // MARK: Parts

    @Test(arguments: [
        // (Range value, body size, the part or nil)
        ("bytes=0-1", 11, "0...1"), ("bytes=5-", 11, "5...10"), ("bytes=-3", 11, "8...10"), ("bytes=-30", 11, "0...10"),
        ("bytes=3-100", 11, "3...10"), ("bytes=10-10", 11, "10...10"), ("BYTES=0-1", 11, "0...1"), (" bytes= 2-4 ", 11, "2...4"),
        ("bytes=0-99999999999999999999999999", 11, "0...10"), ("bytes=-99999999999999999999999999", 11, "0...10"),
        ("bytes=0-1,3-4", 11, nil), ("bytes=0-1, ", 11, nil), ("bytes=11-", 11, nil), ("bytes=99999999999999999999999999-", 11, nil),
        ("bytes=5-2", 11, nil), ("bytes=-0", 11, nil), ("bytes=-", 11, nil), ("bytes=", 11, nil), ("bytes=0-1", 0, nil),
        ("items=0-1", 11, nil), ("bytes 0-1", 11, nil), ("bytes=a-1", 11, nil), ("bytes=-1-2", 11, nil), ("bytes=0--1", 11, nil),
        ("bytes=+0-1", 11, nil), ("bytes=0-1\u{0}", 11, nil), ("bytes=0 - 1", 11, nil),
        ("bytes=0-1" + String(repeating: ",0-1", count: 10_000), 11, nil),
    ] as [(String, Int64, String?)])
    func aRangeOfAStoredBody(range: String, size: Int64, part: String?) {
        #expect(CacheRules.byteRange(range, size: size).map { "\($0.lowerBound)...\($0.upperBound)" } == part)
    }

    @Test func aPartCarriesItsRangeAndLengthAndTheStoredFields() {
        let whole = stored([("Content-Type", "text/plain"), ("Content-Length", "11"), ("A", "1"), ("content-range", "bytes 0-10/11")])
        #expect(CacheRules.partFields(whole, part: 2...4, size: 11).map { "\($0.name): \($0.value)" }
            == ["Content-Type: text/plain", "A: 1", "Content-Range: bytes 2-4/11", "Content-Length: 3"])
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
