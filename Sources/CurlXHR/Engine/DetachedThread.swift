#if canImport(Glibc)
import Glibc
#endif

/// Starts a detached thread that runs `body`. The library's threads are part of how it works,
/// so failing to start one (`what` names it) stops the process.
func startDetachedThread(_ what: String, _ body: @escaping @Sendable () -> Void) {
    final class Context: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Context(body)).toOpaque()
    let result = pthread_create(&thread, nil, { context in
        Unmanaged<Context>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(result == 0, "could not start the CurlXHR \(what) thread: error \(result)")
    pthread_detach(thread)
}
