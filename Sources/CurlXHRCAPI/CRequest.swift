import CurlXHRHeader
import CurlXHR
#if canImport(Glibc)
import Glibc
#endif

/// What a `cxhr_request *` stands for: an ``HttpRequest`` plus the memory the C interface
/// hands out (strings and the receive buffer) and the C callback.
final class CRequest: @unchecked Sendable {
    let request = HttpRequest()
    let handle: OpaquePointer

    private struct State {
        var callback: cxhr_status_callback?
        var userData: UnsafeMutableRawPointer?
        var progressCallback: cxhr_progress_callback?
        var progressUserData: UnsafeMutableRawPointer?
        /// Strings returned to C, by what they answer; kept until re-open or destroy.
        var strings: [String: UnsafeMutablePointer<CChar>] = [:]
        /// Earlier answers to the same question, still valid until re-open or destroy.
        var retired: [UnsafeMutablePointer<CChar>] = []
        var buffer: UnsafeMutableRawBufferPointer?
        /// Why the last call failed before reaching the request (a NULL argument), and its kind.
        var refusal: String?
        var refusalCode = HttpRequestError.Code.invalidArgument
        /// The last call succeeded without passing through the request (whose lastError may
        /// still name an earlier refusal).
        var succeededHere = false
        var isDestroyed = false
        /// Callbacks running now, and the thread of the latest one.
        var runningCallbacks = 0
        var callbackThread: pthread_t?
    }

    private let state = Locked(State())
    /// The bearer token `cxhr_oauth2_authorize` last set on the request: the one a 401 refused.
    let bearerToken = Locked<String?>(nil)

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        forgetReturnedMemory()
    }

    // MARK: The registry

    private static let registry = HandleRegistry<CRequest>()

    static func register() -> CRequest { registry.register { CRequest(handle: $0) } }
    static func find(_ handle: OpaquePointer?) -> CRequest? { registry.find(handle) }
    static func unregister(_ handle: OpaquePointer?) -> CRequest? { registry.unregister(handle) }

    /// Kept equal to the header's CURLXHR_VERSION (a C test checks).
    static let version: StaticString = "0.2.0"


    // MARK: Calls

    /// Runs a call on the request, clearing an earlier refusal.
    func call(_ body: (HttpRequest) -> Bool) -> Bool {
        state.withLock {
            $0.refusal = nil
            $0.succeededHere = false
        }
        return body(request)
    }

    /// Records that a call succeeded without asking the request: no last error now.
    func succeed() {
        state.withLock {
            $0.refusal = nil
            $0.succeededHere = true
        }
    }

    /// Records why a call was refused before it reached the request.
    func refuse(_ reason: String, code: HttpRequestError.Code = .invalidArgument) -> Bool {
        state.withLock {
            $0.refusal = reason
            $0.refusalCode = code
            $0.succeededHere = false
        }
        return false
    }

    var lastError: String? {
        let (refusal, succeeded) = state.withLock { ($0.refusal, $0.succeededHere) }
        return refusal ?? (succeeded ? nil : request.lastError?.message)
    }

    /// The kind of ``lastError``.
    var lastErrorCode: HttpRequestError.Code? {
        let (refusal, succeeded) = state.withLock { ($0.refusal != nil ? $0.refusalCode : nil, $0.succeededHere) }
        return refusal ?? (succeeded ? nil : request.lastError?.code)
    }

    // MARK: The callback

    /// The C callbacks a request has: ready states, and progress.
    enum CallbackKind {
        case status, progress
    }

    func setCallback(_ callback: cxhr_status_callback?, userData: UnsafeMutableRawPointer?, kind: CallbackKind = .status) {
        state.withLock {
            switch kind {
            case .status: ($0.callback, $0.userData) = (callback, userData)
            case .progress: ($0.progressCallback, $0.progressUserData) = (callback, userData)
            }
        }
        var run: (@Sendable (HttpRequest) -> Void)?
        if callback != nil { run = { [weak self] _ in self?.runCallback(kind) } }
        switch kind {
        case .status: request.onStatusChange = run
        case .progress: request.onProgress = run
        }
    }

    private func runCallback(_ kind: CallbackKind) {
        let target = state.withLock { state -> (cxhr_status_callback, UnsafeMutableRawPointer?)? in
            let target = kind == .status ? (state.callback, state.userData) : (state.progressCallback, state.progressUserData)
            return target.0.map { ($0, target.1) }
        }
        guard let (callback, userData) = target else { return }
        whileAlive { callback(handle, userData) }
    }

    /// Runs a C callback unless the request was destroyed; ``destroy()`` waits for it.
    func whileAlive(_ body: () -> Void) {
        let alive = state.withLock { state -> Bool in
            guard !state.isDestroyed else { return false }
            state.runningCallbacks += 1
            state.callbackThread = pthread_self()
            return true
        }
        guard alive else { return }
        body()
        state.withLock { $0.runningCallbacks -= 1 }
    }

    /// Stops callbacks and the transfer. From another thread, waits for a callback of this
    /// request that is running; from inside one, returns at once (it finishes normally).
    func destroy() {
        request.onStatusChange = nil
        request.onProgress = nil
        request.onEvent = nil
        request.onTrace = nil
        state.withLock { $0.isDestroyed = true }
        request.abort()
        while true {
            let busy = state.withLock { state in
                state.runningCallbacks > 0
                    && !(state.callbackThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
            }
            guard busy else { return }
            usleep(1000)
        }
    }

    // MARK: Memory handed to C

    /// A C copy of `text` that stays valid until re-open or destroy.
    func keep(_ text: String?, as question: String) -> UnsafePointer<CChar>? {
        guard let text else { return nil }
        return state.withLock { state in
            if let kept = state.strings[question], String(cString: kept) == text {
                return UnsafePointer(kept)
            }
            let copy = strdup(text)!
            if let old = state.strings.updateValue(copy, forKey: question) { state.retired.append(old) }
            return UnsafePointer(copy)
        }
    }

    /// The bytes since the previous call, in memory valid until the next call that reads.
    func takeReceiveBuffer() -> UnsafeRawBufferPointer {
        let data = request.getReceiveBuffer()
        return state.withLock { state in
            state.buffer?.deallocate()
            state.buffer = nil
            guard !data.isEmpty else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 16)
            buffer.copyBytes(from: data)
            state.buffer = buffer
            return UnsafeRawBufferPointer(buffer)
        }
    }

    /// Frees the strings and the buffer handed out so far (on re-open and destroy).
    func forgetReturnedMemory() {
        state.withLock { state in
            for pointer in state.strings.values { free(pointer) }
            for pointer in state.retired { free(pointer) }
            state.strings.removeAll()
            state.retired.removeAll()
            state.buffer?.deallocate()
            state.buffer = nil
        }
    }
}
