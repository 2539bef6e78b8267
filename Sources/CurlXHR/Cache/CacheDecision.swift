/// What the cache does for one send, decided from the request, its policy, what is stored and
/// the time (before the send), then from the response's head: pure, so each step is tested
/// as a transcript (CacheDecisionTests) apart from the store and the network.
enum CacheDecision {
    /// The request as the cache sees it.
    struct Request {
        var method: String
        var fields: CacheRules.Fields
        var policy: HttpRequest.CachePolicy
        /// The request asks for part of the body (`setRange`, or a `Range` field).
        var range: Bool
        /// Bodies are decoded (a stored decoded body cannot answer a request that wants them encoded).
        var decodes: Bool
        /// The request's `Range` field, when it alone asks for the part (no `setRange`, no
        /// `If-Range`): a stored complete response may answer it with that part.
        var rangeField: String? = nil

        /// GET or HEAD: the methods a stored response may answer.
        var reads: Bool { method == "GET" || method == "HEAD" }
        var mayStore: Bool { policy.contains(.update) || policy.contains(.updateForced) }
    }

    /// The plan made before the send.
    enum Plan {
        /// To the network. `store`: a storable answer is kept. `freshens`: a 304 to the
        /// caller's own conditional updates this stored response (and is the caller's).
        case forward(store: Bool, freshens: CacheStore.Entry?)
        /// Answered from `entry` with `age` in its `Age` field; `notModified`: as a 304 made
        /// from it (the caller's conditional matched a fresh response).
        case serve(CacheStore.Entry, age: Int, notModified: Bool)
        /// Answered from `entry` with a 206 of the bytes `part` of its body (a GET's `Range`).
        case servePart(CacheStore.Entry, age: Int, part: ClosedRange<Int64>)
        /// To the network with `conditions` in place of the caller's: a 304 that matches is
        /// not the caller's but updates `entry`, which then answers.
        case validate(CacheStore.Entry, conditions: CacheRules.Fields, store: Bool)
        /// `only-if-cached` with nothing usable: a 504 made by the cache.
        case gatewayTimeout
        /// `readForced` with nothing stored: DONE with status 0 and a text.
        case offlineMiss
    }

    /// The plan for `request` at `now`, with `candidates` the entries stored for its key.
    static func plan(_ request: Request, candidates: [CacheStore.Entry], now: Double) -> Plan {
        let store = request.method == "GET" && !request.range && request.mayStore
        // Offline, nothing goes to the network: what the cache cannot answer fails.
        if request.policy.contains(.readForced), !request.reads || request.range { return .offlineMiss }
        let usable = candidates.first {
            $0.varyValues == CacheKeys.varyValues($0.varyNames, in: request.fields) && (request.decodes || !$0.decoded)
        }
        guard request.reads, !request.range else {
            return usable.flatMap { part(of: $0, for: request, now: now) } ?? .forward(store: false, freshens: nil)
        }
        if request.policy.contains(.readForced) {
            guard let entry = usable else { return .offlineMiss }
            let age = Int(min(CacheRules.currentAge(entry.stored, now: now), Double(1 << 31)))
            return .serve(entry, age: age, notModified: false)
        }
        let control = CacheControl(request.fields)
        guard request.policy.contains(.read), let entry = usable else {
            return control.has("only-if-cached") && request.policy.contains(.read) ? .gatewayTimeout : .forward(store: store, freshens: nil)
        }
        let conditional = hasConditions(request.fields)
        switch CacheRules.reuse(entry.stored, requestFields: request.fields, now: now) {
        case .fresh(let age), .stale(let age), .staleWhileRevalidate(let age):
            return .serve(entry, age: age, notModified: conditional && matches(request.fields, entry.stored))
        case .validate:
            if control.has("only-if-cached") { return .gatewayTimeout }
            // The caller's own conditions go as they are: the answer is theirs.
            if conditional { return .forward(store: store, freshens: entry) }
            let conditions = CacheRules.validation(for: entry.stored, requestFields: request.fields)
            return conditions.isEmpty ? .forward(store: store, freshens: nil) : .validate(entry, conditions: conditions, store: store)
        }
    }

    /// The part of `entry` that answers a GET's `Range` (RFC 9111, section 3.4: a stored
    /// complete response may), when it is fresh or may serve stale, and holds the body as it
    /// was sent without a content coding (the range counts bytes of that); else nil.
    static func part(of entry: CacheStore.Entry, for request: Request, now: Double) -> Plan? {
        guard request.method == "GET", request.policy.contains(.read), let range = request.rangeField, !hasConditions(request.fields),
              entry.stored.status == 200, !entry.decoded,
              (HeaderFieldNames.value("Content-Encoding", in: entry.stored.fields) ?? "identity").lowercased() == "identity",
              let part = CacheRules.byteRange(range, size: entry.bodySize) else { return nil }
        switch CacheRules.reuse(entry.stored, requestFields: request.fields, now: now) {
        case .fresh(let age), .stale(let age), .staleWhileRevalidate(let age): return .servePart(entry, age: age, part: part)
        case .validate: return nil
        }
    }

    /// What becomes of a final response head.
    enum HeadOutcome: Equatable {
        /// The caller gets it; `store`: its body is kept as it arrives, and stored when whole.
        case deliver(store: Bool)
        /// A 304 to the cache's own validation: the caller gets the stored response instead,
        /// with this head.
        case replayStored(CacheRules.Stored)

        static func == (lhs: HeadOutcome, rhs: HeadOutcome) -> Bool {
            switch (lhs, rhs) {
            case (.deliver(let a), .deliver(let b)): a == b
            case (.replayStored(let a), .replayStored(let b)): a.status == b.status && a.fields.elementsEqual(b.fields) { $0 == $1 }
            default: false
            }
        }
    }

    /// The outcome of a final head with `status` and `fields` for `request` under `plan`,
    /// sent at `requestTime` and come at `responseTime`.
    static func head(_ plan: Plan, request: Request, status: Int, fields: CacheRules.Fields,
                     requestTime: Double, responseTime: Double) -> HeadOutcome {
        let store: Bool
        switch plan {
        case .validate(let entry, _, let mayStore):
            if status == 304, CacheRules.notModified(fields, matches: entry.stored) {
                return .replayStored(CacheRules.updated(entry.stored, by: fields, requestTime: requestTime, responseTime: responseTime))
            }
            store = mayStore
        case .forward(let mayStore, _):
            store = mayStore
        case .serve, .servePart, .gatewayTimeout, .offlineMiss:
            return .deliver(store: false)
        }
        guard store else { return .deliver(store: false) }
        if request.policy.contains(.updateForced), status >= 200, status < 400, status != 206, status != 304 {
            return .deliver(store: true)
        }
        return .deliver(store: request.policy.contains(.update)
                        && CacheRules.isStorable(method: request.method, requestFields: request.fields, status: status, responseFields: fields))
    }

    /// The request carries conditions of its own.
    static func hasConditions(_ fields: CacheRules.Fields) -> Bool {
        HeaderFieldNames.first("If-None-Match", in: fields) != nil || HeaderFieldNames.first("If-Modified-Since", in: fields) != nil
    }

    /// Whether the request's conditions hold for `stored` as a 304 would say (RFC 9110
    /// 13.1.1–13.1.3, 13.2.2): `If-None-Match` by weak comparison, else `If-Modified-Since`.
    static func matches(_ fields: CacheRules.Fields, _ stored: CacheRules.Stored) -> Bool {
        if let noneMatch = HeaderFieldNames.value("If-None-Match", in: fields) {
            let tags = noneMatch.split(separator: ",").map { HeaderFieldNames.trimmed($0) }
            if tags.contains("*") { return true }
            guard let tag = HeaderFieldNames.first("ETag", in: stored.fields) else { return false }
            return tags.contains { weak($0) == weak(tag) }
        }
        guard let since = HeaderFieldNames.date("If-Modified-Since", in: fields) else { return false }
        let modified = HeaderFieldNames.date("Last-Modified", in: stored.fields) ?? HeaderFieldNames.date("Date", in: stored.fields)
        return modified.map { $0 <= since } ?? false
    }

    private static func weak(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}
