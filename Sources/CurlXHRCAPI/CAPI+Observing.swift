// Seeing a request from C: cxhr_get_time, cxhr_set_event_callback and cxhr_set_trace_callback
// of curlxhr.h, in CAPI.swift's style.
import CurlXHRHeader
import CurlXHR

@c @implementation
public func cxhr_get_time(_ handle: OpaquePointer?, _ which: cxhr_time) -> Double {
    guard let request = CRequest.find(handle) else { return -1 }
    let metrics = request.request.getMetrics()
    let seconds: Double? = switch which {
    case CXHR_TIME_NAMELOOKUP: metrics.nameLookupTime
    case CXHR_TIME_CONNECT: metrics.connectTime
    case CXHR_TIME_TLS: metrics.tlsTime
    case CXHR_TIME_PRETRANSFER: metrics.preTransferTime
    case CXHR_TIME_STARTTRANSFER: metrics.startTransferTime
    case CXHR_TIME_REDIRECT: metrics.redirectTime
    case CXHR_TIME_TOTAL: metrics.totalTime
    case CXHR_TIME_QUEUE: metrics.queueTime
    default: nil
    }
    return seconds ?? -1
}

/// A C callback and its user data, called from the request's callback queue.
private struct CCallback<Function>: @unchecked Sendable {
    let function: Function
    let userData: UnsafeMutableRawPointer?
}

@c @implementation
public func cxhr_set_event_callback(_ handle: OpaquePointer?, _ callback: cxhr_event_callback?,
                                    _ userData: UnsafeMutableRawPointer?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    request.request.onEvent = callback.map { function in
        let target = CCallback(function: function, userData: userData)
        return { [weak request] _, event in
            guard let request else { return }
            request.whileAlive { deliver(event, to: target, of: request) }
        }
    }
    request.succeed()
    return true
}

/// An event as `cxhr_event`: its detail valid for the callback's duration.
private func deliver(_ event: HttpRequest.Event, to target: CCallback<cxhr_event_callback>, of request: CRequest) {
    var made = cxhr_event(kind: CXHR_EVENT_DONE, status: 0, delay_s: 0, attempt: 0, detail: nil)
    var detail = ""
    switch event {
    case .queued: made.kind = CXHR_EVENT_QUEUED
    case .started: made.kind = CXHR_EVENT_STARTED
    case .connected(let address, let port, let reused):
        made.kind = CXHR_EVENT_CONNECTED
        made.status = Int32(clamping: port)
        made.attempt = reused ? 1 : 0
        detail = address
    case .tlsEstablished(let version):
        made.kind = CXHR_EVENT_TLS_ESTABLISHED
        detail = version
    case .requestSent: made.kind = CXHR_EVENT_REQUEST_SENT
    case .interimResponse(let status):
        made.kind = CXHR_EVENT_INTERIM_RESPONSE
        made.status = Int32(clamping: status)
    case .authenticationRound(let status, let scheme):
        made.kind = CXHR_EVENT_AUTHENTICATION_ROUND
        made.status = Int32(clamping: status)
        detail = scheme
    case .redirect(let status, let location):
        made.kind = CXHR_EVENT_REDIRECT
        made.status = Int32(clamping: status)
        detail = location
    case .retry(let attempt, let delay, let reason):
        made.kind = CXHR_EVENT_RETRY
        made.attempt = Int32(clamping: attempt)
        made.delay_s = delay
        detail = reason
    case .cache(let outcome):
        made.kind = CXHR_EVENT_CACHE
        detail = outcome.rawValue
    case .done:
        made.kind = CXHR_EVENT_DONE
        made.status = Int32(clamping: request.request.getStatus())
    }
    detail.withCString { text in
        made.detail = text
        target.function(request.handle, &made, target.userData)
    }
}

@c @implementation
public func cxhr_set_trace_callback(_ handle: OpaquePointer?, _ callback: cxhr_trace_callback?,
                                    _ userData: UnsafeMutableRawPointer?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    request.request.onTrace = callback.map { function in
        let target = CCallback(function: function, userData: userData)
        return { [weak request] _, entry in
            guard let request else { return }
            let kind: cxhr_trace_kind = switch entry.kind {
            case .info: CXHR_TRACE_INFO
            case .headerOut: CXHR_TRACE_HEADER_OUT
            case .headerIn: CXHR_TRACE_HEADER_IN
            case .dataOut: CXHR_TRACE_DATA_OUT
            case .dataIn: CXHR_TRACE_DATA_IN
            case .tlsOut: CXHR_TRACE_TLS_OUT
            case .tlsIn: CXHR_TRACE_TLS_IN
            }
            request.whileAlive {
                entry.bytes.withUnsafeBytes { target.function(request.handle, kind, $0.baseAddress, $0.count, target.userData) }
            }
        }
    }
    request.succeed()
    return true
}
