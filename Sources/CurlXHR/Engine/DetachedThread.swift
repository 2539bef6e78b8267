import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// Starts a detached thread that runs `body`, named `cxhr-<what>` (as `top -H`, `perf` and
/// debuggers show it; a new thread would otherwise carry its creator's name, often a Dispatch
/// worker's). The library's threads are part of how it works, so failing to start one stops
/// the process.
func startDetachedThread(_ what: String, _ body: @escaping @Sendable () -> Void) {
    final class Context: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let name = "cxhr-" + what
    let context = Unmanaged.passRetained(Context {
        cxhr_name_this_thread(name)
        body()
    }).toOpaque()
    let result = pthread_create(&thread, nil, { context in
        Unmanaged<Context>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(result == 0, "could not start the CurlXHR \(what) thread: error \(result)")
    pthread_detach(thread)
}
