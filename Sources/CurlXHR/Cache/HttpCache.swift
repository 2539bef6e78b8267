import Synchronization

/// The process's cache: a ``CacheStore`` in the folder `HttpRequest.setCacheFolder` named,
/// used by every request whose ``HttpRequest/CachePolicy`` is not empty. Off (nil) until a
/// folder is set; a request then pays one atomic load for it.
final class HttpCache: Sendable {
    let store: CacheStore
    /// Fresh responses answered lately, for plain GETs of them.
    let memo = Locked(CacheMemo())

    private init(store: CacheStore) { self.store = store }

    private static let isOn = Atomic<Bool>(false)
    private static let current = Locked<HttpCache?>(nil)
    /// The URLs the cache takes part in: those containing one of these texts; nil for all. A
    /// test process whose other tests must not meet the cache narrows it to the URLs of the
    /// cache's tests. (Texts, not a predicate: a closure read through the generic lock on
    /// every send was wrapped in one more reabstraction thunk each time.)
    static let scope = Locked<[String]?>(nil)
    /// Why the last `use(folder:maxBytes:)` refused, for ``HttpRequest/cacheFolderError``.
    static let lastError = Locked<String?>(nil)

    /// The cache requests use, or nil when none is set.
    static var shared: HttpCache? {
        guard isOn.load(ordering: .acquiring) else { return nil }
        return current.withLock { $0 }
    }

    /// Opens the cache in `folder` (made if missing) for the process, replacing the one in
    /// use; nil turns caching off. The reason it cannot, or nil.
    static func use(folder: String?, maxBytes: Int64) -> String? {
        let problem: String?
        if let folder {
            if folder.isEmpty || folder.utf8.contains(0) {
                problem = "the cache folder must be a path"
            } else if maxBytes < 1 {
                problem = "the cache's size limit must be at least 1 byte (\(maxBytes))"
            } else {
                do throws(CacheStore.Failure) {
                    let opened = HttpCache(store: try CacheStore(folder: folder, maxBytes: maxBytes))
                    current.withLock { $0 = opened }
                    isOn.store(true, ordering: .releasing)
                    problem = nil
                } catch {
                    problem = error.description
                }
            }
        } else {
            isOn.store(false, ordering: .releasing)
            current.withLock { $0 = nil }
            problem = nil
        }
        lastError.withLock { $0 = problem }
        return problem
    }

    /// Seconds since 1970, the cache's clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The cache's part in a send.
    enum Part {
        case none
        case exchange(CacheExchange)
        /// The cookies the jar adds for the URL are needed first (``CookieStore/cookieHeader(for:)``,
        /// read outside any request's lock: it waits for the engine thread).
        case needsJar
    }

    /// The exchange of a send of `message` under `policy` (`jar`: the `Cookie` value the jar
    /// adds for the message's URL, when read), or none when the cache takes no part in it (no
    /// cache, an empty policy, a scheme other than http and https, a request routed elsewhere
    /// than its URL says or showing a client certificate: ``TransferSwitches/keepsOutOfCache``).
    static func exchange(for message: RequestMessage, switches: TransferSwitches, policy: HttpRequest.CachePolicy,
                         jar: String?) -> Part {
        guard !policy.isEmpty, let cache = shared, !switches.keepsOutOfCache else { return .none }
        if let scope = scope.withLock({ $0 }), !scope.contains(where: { message.url.contains($0) }) { return .none }
        // A plain GET of a URL answered lately (the memo): no index, no rules, no body file.
        // (The memo keeps no response with `Vary`, so the jar's cookies do not matter to it.)
        let plain = message.method == "GET" && policy.contains(.read) && !policy.contains(.readForced) && switches.range == nil
            && message.credentials == nil && !message.urlHasUser && CacheMemo.isPlain(message.headers)
        if plain, let answer = cache.memoAnswer(message.url, decodes: switches.contentDecoding) { return .exchange(answer) }
        guard let key = CacheKeys.primary(message.url) else { return .none }
        if switches.cookies, jar == nil, CacheRules.safeMethods.contains(message.method) { return .needsJar }
        let fields = CacheKeys.fieldsAsSent(message, switches: switches, jar: jar ?? "")
        let rangeField = HeaderFieldNames.value("Range", in: fields)
        let request = CacheDecision.Request(method: message.method, fields: fields, policy: policy,
                                            range: switches.range != nil || rangeField != nil, decodes: switches.contentDecoding,
                                            rangeField: switches.range == nil && HeaderFieldNames.first("If-Range", in: fields) == nil ? rangeField : nil)
        let now = now()
        let candidates = request.reads && (!request.range || request.rangeField != nil) ? cache.store.entries(for: key) : []
        let plan = CacheDecision.plan(request, candidates: candidates, now: now)
        if case .forward(false, .none) = plan, CacheRules.safeMethods.contains(request.method) { return .none }
        if case .serve(let entry, _, _) = plan { cache.store.touch(entry, now: now) }
        if case .servePart(let entry, _, _) = plan { cache.store.touch(entry, now: now) }
        if plain, case .serve(let entry, _, false) = plan, let item = cache.memoItem(entry, now: now) {
            cache.memo.withLock { $0.keep(item, for: message.url, stamp: cache.store.changeStamp()) }
            return .exchange(CacheExchange(cache: cache, request: request, memo: item, now: now))
        }
        return .exchange(CacheExchange(cache: cache, request: request, key: key, plan: plan, requestTime: now))
    }

    /// The answer from the memo to a plain GET of `url`, or nil.
    private func memoAnswer(_ url: String, decodes: Bool) -> CacheExchange? {
        let now = Self.now()
        let stamp = store.changeStamp()
        guard let item = memo.withLock({ $0.item(for: url, stamp: stamp, now: now) }), decodes || !item.entry.decoded else { return nil }
        store.touch(item.entry, now: now)
        let request = CacheDecision.Request(method: "GET", fields: [], policy: .default, range: false, decodes: decodes)
        return CacheExchange(cache: self, request: request, memo: item, now: now)
    }

    /// A memo item for `entry`, fresh at `now`, when the memo may answer for it: no `Vary`,
    /// not to be validated every time.
    private func memoItem(_ entry: CacheStore.Entry, now: Double) -> CacheMemo.Item? {
        guard entry.varyNames.isEmpty, !CacheControl(entry.stored.fields).has("no-cache") else { return nil }
        let lifetime = CacheRules.freshnessLifetime(entry.stored).seconds
        let age = CacheRules.currentAge(entry.stored, now: now)
        guard lifetime > age else { return nil }
        var body: [UInt8]?
        if entry.bodySize <= CacheMemo.maxBodyBytes {
            let descriptor = store.openBody(entry)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: Int(entry.bodySize))
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            guard got == bytes.count else { return nil }
            body = bytes
        }
        return CacheMemo.Item(entry: entry, headLines: CacheMemo.headLines(entry.stored.fields), body: body,
                              freshUntil: now + (lifetime - age), ageAtStore: age, asOf: now)
    }
}

#if canImport(Glibc)
import Glibc
#endif
