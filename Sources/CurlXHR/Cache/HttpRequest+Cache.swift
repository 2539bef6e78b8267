extension HttpRequest {
    /// Turns on the process's HTTP cache in `path` (made if missing, mode 0700; an existing
    /// folder, empty or holding a cache, is used as it is), keeping at most `maxBytes` of
    /// responses (bodies and heads; the least recently used go first). `nil` turns the cache
    /// off. Processes that set the same folder share it.
    ///
    /// The cache is RFC 9111's private cache: responses are stored as their headers allow and
    /// answer later requests while fresh; stale ones are validated with the server
    /// (`If-None-Match`, `If-Modified-Since`) and a 304 is never seen by the caller. A response
    /// from the cache is reported exactly as one from the network (OPENED, SENT,
    /// HEADERS_RECEIVED, LOADING, DONE), with an `Age` field; ``isResponseFromCache()`` tells
    /// them apart. Each request's ``setCachePolicy(_:)`` chooses how it uses the cache.
    ///
    /// Bodies are stored as files, streamed in and out (never held whole in memory), written
    /// under a temporary name and renamed once whole: a process killed while storing leaves
    /// no entry, and the next process to open the folder removes what it left.
    /// - Returns: `false`, with the reason in ``cacheFolderError``, when the folder cannot be
    ///   made or opened or `maxBytes` is below 1; the cache in use, if any, stays.
    @discardableResult
    public static func setCacheFolder(_ path: String?, maxBytes: Int64) -> Bool {
        HttpCache.use(folder: path, maxBytes: maxBytes) == nil
    }

    /// Why the last ``setCacheFolder(_:maxBytes:)`` returned `false`, or nil after one that
    /// succeeded.
    public static var cacheFolderError: String? {
        HttpCache.lastError.withLock { $0 }
    }

    /// How the next sends use the process's cache (``setCacheFolder(_:maxBytes:)``):
    /// ``CachePolicy/default`` (`[.read, .update]`) unless set; survives `open`. The request's
    /// own `Cache-Control` and `Pragma` fields (`no-cache`, `no-store`, `max-age`,
    /// `max-stale`, `min-fresh`, `only-if-cached`) apply too, and are still sent.
    /// - Returns: `false` while a send is in flight.
    @discardableResult
    public func setCachePolicy(_ policy: CachePolicy) -> Bool {
        changeCore { $0.cachePolicy = policy }
    }

    /// Whether the last response came from the cache (also when the server confirmed it with
    /// a 304 to the cache's validation); `false` before HEADERS_RECEIVED.
    public func isResponseFromCache() -> Bool {
        withCore { $0.response != nil && $0.responseFromCache }
    }
}
