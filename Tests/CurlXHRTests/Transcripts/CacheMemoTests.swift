@testable import CurlXHR
import Testing

/// The memo of fresh responses, event by event: what it answers, until when, and what empties it.
@Suite(.ownThreads) struct CacheMemoTests {
    static func item(freshUntil: Double, age: Double = 0, asOf: Double = 100) -> CacheMemo.Item {
        let entry = CacheStore.Entry(key: "http://h/a", stored: CacheRules.Stored(status: 200, fields: [("ETag", "\"a\""), ("Age", "9")],
                                                                                requestTime: asOf, responseTime: asOf))
        return CacheMemo.Item(entry: entry, headLines: CacheMemo.headLines(entry.stored.fields), body: Array("body".utf8),
                              freshUntil: freshUntil, ageAtStore: age, asOf: asOf)
    }

    @Test func anItemAnswersWhileFreshAndTheStoreUnchanged() {
        var memo = CacheMemo()
        #expect(memo.item(for: "http://h/a", stamp: 1, now: 100) == nil)
        memo.keep(Self.item(freshUntil: 160, age: 10), for: "http://h/a", stamp: 1)
        #expect(memo.item(for: "http://h/a", stamp: 1, now: 150)?.age(at: 150) == 60)
        #expect(memo.item(for: "http://h/A", stamp: 1, now: 150) == nil)  // URLs as spelled
        #expect(memo.item(for: "http://h/a", stamp: 1, now: 160) == nil)  // stale
        #expect(memo.item(for: "http://h/a", stamp: 1, now: 159) != nil)
        // Any write to the store, here or elsewhere, empties it.
        #expect(memo.item(for: "http://h/a", stamp: 2, now: 150) == nil)
        #expect(memo.item(for: "http://h/a", stamp: 1, now: 150) == nil)
    }

    @Test func itHoldsABoundedNumberOfItems() {
        var memo = CacheMemo()
        for index in 0..<CacheMemo.maxItems { memo.keep(Self.item(freshUntil: 1000), for: "http://h/\(index)", stamp: 7) }
        #expect(memo.item(for: "http://h/0", stamp: 7, now: 200) != nil)
        memo.keep(Self.item(freshUntil: 1000), for: "http://h/more", stamp: 7)
        #expect(memo.item(for: "http://h/0", stamp: 7, now: 200) == nil)
        #expect(memo.item(for: "http://h/more", stamp: 7, now: 200) != nil)
    }

    @Test func onlyPlainRequestsAndHeadLinesWithoutAge() {
        #expect(CacheMemo.isPlain([HeaderField(name: "Accept", value: "text/html"), HeaderField(name: "X-Trace", value: "1")]))
        for name in ["cache-control", "Pragma", "If-None-Match", "if-modified-since", "Range", "Authorization", "If-Range"] {
            #expect(!CacheMemo.isPlain([HeaderField(name: name, value: "x")]), "\(name)")
        }
        #expect(String(decoding: CacheMemo.headLines([("ETag", "\"a\""), ("age", "5"), ("X", "y")]), as: UTF8.self) == "ETag: \"a\"\r\nX: y\r\n")
    }
}
