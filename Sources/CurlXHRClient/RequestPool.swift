import CurlXHR

/// The `HttpRequest`s a client's calls have finished with, for its next calls: a request
/// opened again keeps its transfer, its response stream and their buffers, where a new one
/// makes them all. Shared by the copies of a client.
///
/// Only a request nothing but the client has set up goes back: one that no
/// ``HttpClient/configure`` closure, progress limit or call log touched (each of those may leave
/// switches that outlive `open`), and whose call ended with its body read.
final class RequestPool: Sendable {
    /// At most this many wait (the calls a client usually has in flight).
    static let capacity = 64

    private let idle = Locked<[HttpRequest]>([])

    /// A request that waited, or a new one.
    func take() -> HttpRequest {
        idle.withLock { $0.popLast() } ?? HttpRequest()
    }

    /// Keeps `request` for a later call, unless enough wait.
    func giveBack(_ request: HttpRequest) {
        idle.withLock { idle in
            if idle.count < Self.capacity { idle.append(request) }
        }
    }
}

/// The URLs a client made for the last paths it called (its prefix, the base URL and API path,
/// joined with each), shared by the copies of a client: a call to a path called before gets
/// the same string again, with no join, and the request it opens, whose URL was that string,
/// sees the same one.
final class MadeURLs: Sendable {
    /// At most this many paths are remembered (the last ones made).
    static let capacity = 8

    private let made = Locked<[(prefix: String, path: String, url: String)]>([])

    /// The URL for `path` after `prefix`: the one made before, or `make()`'s.
    func url(prefix: String, path: String, make: () -> String) -> String {
        if let url = made.withLock({ made in made.first { $0.path == path && $0.prefix == prefix }?.url }) { return url }
        let url = make()
        made.withLock { made in
            if made.count == Self.capacity { made.removeFirst() }
            made.append((prefix, path, url))
        }
        return url
    }
}
