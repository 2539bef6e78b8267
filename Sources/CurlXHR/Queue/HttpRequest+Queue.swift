extension HttpRequest {
    /// The queue the next `send` goes into, to wait for one of its slots (``RequestQueue``);
    /// `nil` (the default) starts sends at once. A send already made keeps its queue.
    public var queue: RequestQueue? {
        get { withCore { $0.queue } }
        set { withCore { $0.queue = newValue } }
    }

    /// Where the next send waits among the others of its queue: higher priority starts
    /// first. `.normal` by default; a send already made keeps its priority.
    public var priority: Priority {
        get { withCore { $0.priority } }
        set { withCore { $0.priority = newValue } }
    }
}

extension HttpRequest {
    /// Limits the connections the process keeps open at once: `total` over all servers and
    /// `perHost` to any one (host and port); 0 for no limit (the default for both). A request
    /// that needs a connection beyond them waits inside the library for one to free (its
    /// state stays SENT); HTTP/2 requests share one connection and count it once. For
    /// sends made after the call. (libcurl's `CURLMOPT_MAX_TOTAL_CONNECTIONS` and
    /// `CURLMOPT_MAX_HOST_CONNECTIONS`.)
    /// - Returns: `false`, changing nothing, for a negative limit.
    @discardableResult
    public static func setConnectionLimits(total: Int = 0, perHost: Int = 0) -> Bool {
        guard total >= 0, perHost >= 0 else { return false }
        ConnectionLimits.configured.withLock { $0 = ConnectionLimits(total: total, perHost: perHost) }
        ProcessSettings.changed()
        return true
    }
}
