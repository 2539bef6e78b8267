/// Rate limits: how fast a request's bodies move. A pre-send switch (UNSENT, OPENED, DONE; it
/// applies to the next send and stays for later ones).
extension HttpRequest {
    /// Limits how fast the response body comes in and the request body goes out, in bytes per
    /// second, as curl's `--limit-rate` (which sets both) does; 0 is no limit, the default.
    ///
    /// The library holds the rate itself (libcurl 7.88's own limits let a short download run
    /// many times faster): from the first body bytes on, a body never moves faster than the
    /// limit on average, whatever the size of the pieces the network delivers (a 16 KiB piece
    /// at 1 KiB/s waits its 16 seconds, then goes); a body that fell behind, as when the server
    /// stalled, catches up by at most one second's worth at once. The download counts the bytes
    /// as they come over the wire (a compressed body before it is decoded); bodies are paused
    /// meanwhile, so a slow limit holds back the server too. Redirect hops and retries count
    /// toward one limit; a response the HTTP cache answers comes at once. A rate pause is no
    /// stall: the idle limit of ``setTimeouts(connect:headers:idle:total:)`` does not run out during
    /// it, the total timeout does (a body that cannot come within the total time at the rate
    /// ends in the timeout failure). ``abort()`` during a rate pause ends the send at once.
    /// - Parameters:
    ///   - download: the most response body bytes a second; 0 for no limit.
    ///   - upload: the most request body bytes a second (a `multipart/form-data` body gets
    ///     libcurl's own limit, which reads it); 0 for no limit.
    /// - Returns: `false` with ``lastError`` for a negative rate, or a request in flight.
    @discardableResult
    public func setRateLimits(download: Int64 = 0, upload: Int64 = 0) -> Bool {
        guard download >= 0, upload >= 0 else {
            return refuse(.invalidArgument, "a rate limit must be 0 (none) or more bytes a second (download \(download), upload \(upload))")
        }
        return changeSwitches { $0.rateLimits = RateLimits(download: download, upload: upload) }
    }
}
