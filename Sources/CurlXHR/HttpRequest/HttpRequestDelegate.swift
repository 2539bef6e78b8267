/// Receives the ready-state changes of an asynchronous ``HttpRequest``.
///
/// The counterpart of `GDHttpRequestDelegate`. Calls arrive on the request's
/// ``HttpRequest/callbackQueue``, once per transition and in order; LOADING arrives again
/// as more data comes in. Inside the call ``HttpRequest/getState()`` returns the state
/// being reported.
public protocol HttpRequestDelegate: AnyObject, Sendable {
    /// Called once for each ready-state transition of `request` (and again for each LOADING
    /// as more data arrives), on the request's ``HttpRequest/callbackQueue``. The counterpart of
    /// `GDHttpRequestDelegate`'s `onStatusChange:`.
    ///
    /// - Parameter request: the request whose state changed; its ``HttpRequest/getState()``
    ///   returns the state being reported.
    func onStatusChange(_ request: HttpRequest)
}

/// Who receives a request's reports: the delegate (held weakly), the closure, and the
/// progress closure.
///
/// Replaced as a whole when either is set, never changed, so a callback takes both with one
/// reference, and a run of callbacks takes it again only when it was replaced.
final class ReportReceivers: Sendable {
    weak let delegate: (any HttpRequestDelegate)?
    let closure: (@Sendable (HttpRequest) -> Void)?
    let progress: (@Sendable (HttpRequest) -> Void)?

    init(delegate: (any HttpRequestDelegate)?, closure: (@Sendable (HttpRequest) -> Void)?,
         progress: (@Sendable (HttpRequest) -> Void)?) {
        self.delegate = delegate
        self.closure = closure
        self.progress = progress
    }

    static let none = ReportReceivers(delegate: nil, closure: nil, progress: nil)
}
