extension HttpRequest {
    /// How a request uses the process's cache (``HttpRequest/setCacheFolder(_:maxBytes:)``),
    /// mesibo's per-request controls. The default, `[.read, .update]`, is RFC 9111's private
    /// cache: stored responses answer while fresh, are validated when stale, and responses
    /// are stored as their headers allow. An empty policy leaves the cache out of the request.
    public struct CachePolicy: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Answer from a stored response while it is fresh (or the request's `max-stale`
        /// allows it), after asking the server (`If-None-Match`, `If-Modified-Since`) when not.
        public static let read = CachePolicy(rawValue: 1)
        /// Answer from a stored response whatever its age, without the network; with none
        /// stored (and for what a cache never answers: methods other than GET and HEAD, a
        /// range) the request ends in DONE with status 0 and a text (offline use).
        public static let readForced = CachePolicy(rawValue: 2)
        /// Store responses their headers allow a private cache to store.
        public static let update = CachePolicy(rawValue: 4)
        /// Store every complete response to a GET with a status other than 206 and 304, even
        /// one marked `no-store` (to have it for ``readForced`` later).
        public static let updateForced = CachePolicy(rawValue: 8)

        /// `[.read, .update]`: RFC 9111's private cache, what every request uses unless
        /// ``HttpRequest/setCachePolicy(_:)`` says otherwise.
        public static let `default`: CachePolicy = [.read, .update]
    }
}
