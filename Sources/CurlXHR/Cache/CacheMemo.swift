/// Fresh stored responses this process answered lately, by the URL as requests spell it, with
/// what answering them again needs already made: the head's field lines, a small body's bytes,
/// and the time the response stops being fresh. A plain GET (no field that changes how the
/// cache answers it) for such a URL is answered from here, without the index, the rules or the
/// body file.
///
/// Every item is of one state of the store (``CacheStore/changeStamp()``): any write, by this
/// process or another one, empties the memo, which fills again from the index.
struct CacheMemo {
    struct Item {
        let entry: CacheStore.Entry
        /// The stored fields as header lines (`Name: value\r\n`), `Age` left out.
        let headLines: [UInt8]
        /// The body, when small (nil: read from its file).
        let body: [UInt8]?
        /// Until when (seconds since 1970) the response is fresh, and its age at `asOf`.
        let freshUntil: Double
        let ageAtStore: Double
        let asOf: Double

        func age(at now: Double) -> Int { Int(min(ageAtStore + max(0, now - asOf), Double(1 << 31))) }
    }

    static let maxItems = 256
    static let maxBodyBytes = 16 * 1024

    private var items: [String: Item] = [:]
    private var stamp: UInt64 = 0

    /// The fresh item for `url` at `now`, if the store is still in the state `stamp` names.
    mutating func item(for url: String, stamp current: UInt64, now: Double) -> Item? {
        guard !items.isEmpty else { return nil }
        guard current == stamp else {
            items.removeAll()
            return nil
        }
        guard let item = items[url], now < item.freshUntil else { return nil }
        return item
    }

    /// Keeps `item` for `url`, as of the store state `stamp`.
    mutating func keep(_ item: Item, for url: String, stamp current: UInt64) {
        if current != stamp || items.count >= Self.maxItems {
            items.removeAll()
            stamp = current
        }
        items[url] = item
    }

    /// Whether the answer to a request with `fields` can come from the memo: none of them
    /// changes how the cache answers (directives, conditions, ranges, credentials).
    static func isPlain(_ fields: [HeaderField]) -> Bool {
        fields.allSatisfy { field in
            !deciding.contains { MessageValidation.sameFieldName(field.name.utf8, $0.utf8) }
        }
    }

    static let deciding = ["Cache-Control", "Pragma", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since",
                           "If-Range", "Range", "Authorization"]

    /// The header lines of `fields` without `Age`.
    static func headLines(_ fields: CacheRules.Fields) -> [UInt8] {
        var lines: [UInt8] = []
        for field in fields where !HeaderFieldNames.same(field.name, "Age") {
            lines += field.name.utf8
            lines += ": ".utf8
            lines += field.value.utf8
            lines += "\r\n".utf8
        }
        return lines
    }
}
