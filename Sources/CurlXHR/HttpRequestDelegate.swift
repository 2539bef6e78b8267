/// Receives the ready-state changes of an asynchronous ``HttpRequest``.
///
/// The counterpart of `GDHttpRequestDelegate`. Calls arrive on the request's
/// ``HttpRequest/callbackQueue``, once per transition and in order; LOADING arrives again
/// as more data comes in. Inside the call ``HttpRequest/getState()`` returns the state
/// being reported.
public protocol HttpRequestDelegate: AnyObject, Sendable {
    func onStatusChange(_ request: HttpRequest)
}

/// A weak reference to the delegate, storable in the request's locked state.
struct WeakDelegate {
    weak var value: (any HttpRequestDelegate)?
}
