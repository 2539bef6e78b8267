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
