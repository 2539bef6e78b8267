// The C interface declared in curlxhr.h, implemented with @c @implementation so the compiler
// checks every signature against the header. Each function looks its handle up in a
// registry first: handles are tokens that are never reused, so a NULL or destroyed handle is
// refused without being dereferenced.
import CurlXHRHeader
import CurlXHR
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: Life cycle

@c @implementation
public func cxhr_request_create() -> OpaquePointer? {
    CRequest.register().handle
}

@c @implementation
public func cxhr_request_destroy(_ handle: OpaquePointer?) {
    CRequest.unregister(handle)?.destroy()
}

@c @implementation
public func cxhr_set_status_callback(_ handle: OpaquePointer?, _ callback: cxhr_status_callback?,
                                     _ userData: UnsafeMutableRawPointer?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    request.setCallback(callback, userData: userData)
    request.succeed()
    return true
}

@c @implementation
public func cxhr_open(_ handle: OpaquePointer?, _ method: UnsafePointer<CChar>?, _ url: UnsafePointer<CChar>?,
                      _ async: Bool, _ user: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?,
                      _ auth: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let method, let url else { return request.refuse("method and url are required") }
    request.forgetReturnedMemory()
    return request.call {
        $0.open(String(cString: method), url: String(cString: url), async: async,
                user: user.map { String(cString: $0) }, password: password.map { String(cString: $0) },
                auth: auth.map { String(cString: $0) })
    }
}

// MARK: Pre-send switches

@c @implementation
public func cxhr_disable_host_verification(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableHostVerification() } ?? false
}

@c @implementation
public func cxhr_disable_peer_verification(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disablePeerVerification() } ?? false
}

@c @implementation
public func cxhr_disable_follow_location(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableFollowLocation() } ?? false
}

@c @implementation
public func cxhr_disable_cookie_handling(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableCookieHandling() } ?? false
}

@c @implementation
public func cxhr_enable_http_proxy(_ handle: OpaquePointer?, _ host: UnsafePointer<CChar>?, _ port: Int32,
                                   _ user: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?,
                                   _ auth: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let host else { return request.refuse("host is required") }
    return request.call {
        $0.enableHttpProxy(host: String(cString: host), port: Int(port), user: user.map { String(cString: $0) },
                           password: password.map { String(cString: $0) }, auth: auth.map { String(cString: $0) })
    }
}

@c @implementation
public func cxhr_disable_http_proxy(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableHttpProxy() } ?? false
}

@c @implementation
public func cxhr_set_use_environment_proxy(_ use: Bool) {
    HttpRequest.usesEnvironmentProxy = use
}

@c @implementation
public func cxhr_get_use_environment_proxy() -> Bool {
    HttpRequest.usesEnvironmentProxy
}

@c @implementation
public func cxhr_set_ca_certificate_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path else { return request.refuse("path is required") }
    return request.call { $0.setCACertificateFile(String(cString: path)) }
}

@c @implementation
public func cxhr_set_timeouts(_ handle: OpaquePointer?, _ connect: Double, _ headers: Double,
                              _ idle: Double, _ total: Double) -> Bool {
    CRequest.find(handle)?.call { $0.setTimeouts(connect: connect, headers: headers, idle: idle, total: total) } ?? false
}

@c @implementation
public func cxhr_set_range(_ handle: OpaquePointer?, _ start: Int64, _ end: Int64) -> Bool {
    CRequest.find(handle)?.call { $0.setRange(from: start, to: end < 0 ? nil : end) } ?? false
}

@c @implementation
public func cxhr_set_response_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ resume: Bool) -> Bool {
    CRequest.find(handle)?.call { $0.setResponseFile(path.map { String(cString: $0) }, resume: resume) } ?? false
}

@c @implementation
public func cxhr_set_progress_callback(_ handle: OpaquePointer?, _ callback: cxhr_progress_callback?,
                                       _ userData: UnsafeMutableRawPointer?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    request.setCallback(callback, userData: userData, kind: .progress)
    request.succeed()
    return true
}

@c @implementation
public func cxhr_get_progress(_ handle: OpaquePointer?, _ progress: UnsafeMutablePointer<cxhr_progress>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let progress else { return request.refuse("progress is required") }
    let now = request.request.getProgress()
    progress.pointee = cxhr_progress(bytes_sent: now.bytesSent, bytes_to_send: now.bytesToSend,
                                     bytes_received: now.bytesReceived, bytes_to_receive: now.bytesToReceive)
    request.succeed()
    return true
}

@c @implementation
public func cxhr_set_retries(_ handle: OpaquePointer?, _ count: Int32, _ backoff: Double) -> Bool {
    CRequest.find(handle)?.call { $0.setRetries(Int(count), backoff: backoff) } ?? false
}

@c @implementation
public func cxhr_set_max_response_size(_ handle: OpaquePointer?, _ bytes: Int64) -> Bool {
    CRequest.find(handle)?.call { $0.setMaxResponseSize(bytes) } ?? false
}

@c @implementation
public func cxhr_set_ca_certificate_path(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path else { return request.refuse("path is required") }
    return request.call { $0.setCACertificatePath(String(cString: path)) }
}

@c @implementation
public func cxhr_enable_location_trusted(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.enableLocationTrusted() } ?? false
}

@c @implementation
public func cxhr_set_allowed_schemes(_ handle: OpaquePointer?, _ schemes: UnsafePointer<CChar>?,
                                     _ redirectSchemes: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let schemes else { return request.refuse("schemes are required") }
    func names(_ list: UnsafePointer<CChar>) -> [String] {
        String(cString: list).split(separator: ",", omittingEmptySubsequences: true).map { String($0) }
    }
    return request.call { $0.setAllowedSchemes(names(schemes), redirects: redirectSchemes.map(names)) }
}

@c @implementation
public func cxhr_set_max_redirects(_ handle: OpaquePointer?, _ count: Int32) -> Bool {
    CRequest.find(handle)?.call { $0.setMaxRedirects(Int(count)) } ?? false
}

@c @implementation
public func cxhr_set_ip_version(_ handle: OpaquePointer?, _ version: cxhr_ip_version) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let value = HttpRequest.IPVersion(rawValue: Int32(bitPattern: version.rawValue)) else {
        return request.refuse("\(version.rawValue) is not a cxhr_ip_version")
    }
    return request.call { $0.setIPVersion(value) }
}

@c @implementation
public func cxhr_set_tls_version(_ handle: OpaquePointer?, _ minimum: cxhr_tls_version, _ maximum: cxhr_tls_version) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    var bounds: [HttpRequest.TLSVersion?] = []
    for bound in [minimum, maximum] {
        let raw = Int32(bitPattern: bound.rawValue)
        guard raw == 0 || HttpRequest.TLSVersion(rawValue: raw) != nil else {
            return request.refuse("\(bound.rawValue) is not a cxhr_tls_version")
        }
        bounds.append(HttpRequest.TLSVersion(rawValue: raw))
    }
    return request.call { $0.setTLSVersion(minimum: bounds[0], maximum: bounds[1]) }
}

@c @implementation
public func cxhr_disable_content_decoding(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableContentDecoding() } ?? false
}

@c @implementation
public func cxhr_set_default_ca_certificate_file(_ path: UnsafePointer<CChar>?) {
    HttpRequest.caCertificateFile = path.map { String(cString: $0) }
}

@c @implementation
public func cxhr_set_enable_pipelining(_ handle: OpaquePointer?, _ enable: Bool) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    request.request.enablePipelining = enable
    request.succeed()
    return true
}

@c @implementation
public func cxhr_clear_cookies(_ includePersistentStore: Bool) {
    CookieStore.shared.removeAll(includePersistentStore: includePersistentStore)
}

@c @implementation
public func cxhr_cookies_set_file(_ path: UnsafePointer<CChar>?) {
    CookieStore.shared.file = path.map { String(cString: $0) } ?? CookieStore.defaultFile
}

@c @implementation
public func cxhr_cookies_get_file() -> UnsafePointer<CChar> {
    cookieFileText.pointer(to: CookieStore.shared.file)
}

// MARK: The message

@c @implementation
public func cxhr_set_request_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                    _ value: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let name, let value else { return request.refuse("name and value are required") }
    return request.call { $0.setRequestHeader(String(cString: name), value: String(cString: value)) }
}

@c @implementation
public func cxhr_remove_request_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let name else { return request.refuse("a name is required") }
    return request.call { $0.removeRequestHeader(String(cString: name)) }
}

@c @implementation
public func cxhr_add_post_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ key: UnsafePointer<CChar>?,
                               _ fileName: UnsafePointer<CChar>?, _ contentType: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path, let key else { return request.refuse("path and key are required") }
    return request.call {
        $0.addPostFile(String(cString: path), forKey: String(cString: key),
                       fileName: fileName.map { String(cString: $0) }, contentType: contentType.map { String(cString: $0) })
    }
}

@c @implementation
public func cxhr_set_post_value(_ handle: OpaquePointer?, _ value: UnsafePointer<CChar>?,
                                _ key: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let value, let key else { return request.refuse("value and key are required") }
    return request.call {
        $0.setPostValue(String(cString: value), forKey: String(cString: key))
        return $0.lastError == nil
    }
}

@c @implementation
public func cxhr_clear_post_values(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call {
        $0.clearPostValues()
        return $0.lastError == nil
    } ?? false
}

// MARK: Sending and stopping

@c @implementation
public func cxhr_send(_ handle: OpaquePointer?, _ data: UnsafeRawPointer?, _ length: Int,
                      _ timeout: Double) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    // size_t arrives as Int: a length above PTRDIFF_MAX is negative here and no buffer has it.
    guard length >= 0 else { return request.refuse("length is greater than PTRDIFF_MAX") }
    guard data != nil || length == 0 else { return request.refuse("data is NULL but length is not 0") }
    // Nothing is copied for a send the state refuses (the request checks again as it sends).
    let state = request.request.getState()
    guard state == .opened else { return request.refuse("send is not allowed in state \(state)", code: .invalidState) }
    let body = data.map { Data(bytes: $0, count: length) }
    return request.call { $0.sendData(body, timeout: timeout) }
}

@c @implementation
public func cxhr_send_text(_ handle: OpaquePointer?, _ text: UnsafePointer<CChar>?, _ timeout: Double) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    let body = text.map { String(cString: $0) }
    return request.call { $0.send(body, timeout: timeout) }
}

@c @implementation
public func cxhr_send_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ timeout: Double) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path else { return request.refuse("path is required") }
    return request.call { $0.sendWithFile(String(cString: path), timeout: timeout) }
}

@c @implementation
public func cxhr_abort(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.abort() } ?? false
}

@c @implementation
public func cxhr_close(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.close() } ?? false
}

// MARK: The response

@c @implementation
public func cxhr_get_state(_ handle: OpaquePointer?) -> cxhr_state {
    let state = CRequest.find(handle)?.request.getState() ?? .unsent
    return cxhr_state(rawValue: UInt32(state.rawValue))
}

@c @implementation
public func cxhr_get_status(_ handle: OpaquePointer?) -> Int32 {
    Int32(clamping: CRequest.find(handle)?.request.getStatus() ?? 0)
}

@c @implementation
public func cxhr_get_status_text(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let request = CRequest.find(handle) else { return nil }
    return request.keep(request.request.getStatusText(), as: "status text")
}

@c @implementation
public func cxhr_get_response_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let request = CRequest.find(handle), let name else { return nil }
    let field = String(cString: name)
    return request.keep(request.request.getResponseHeader(field) ?? "", as: "header " + field.lowercased())
}

@c @implementation
public func cxhr_get_response_trailer(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let request = CRequest.find(handle), let name else { return nil }
    let field = String(cString: name)
    return request.keep(request.request.getResponseTrailer(field) ?? "", as: "trailer " + field.lowercased())
}

@c @implementation
public func cxhr_get_all_response_headers(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let request = CRequest.find(handle) else { return nil }
    return request.keep(request.request.getAllResponseHeaders(), as: "all headers")
}

@c @implementation
public func cxhr_get_receive_buffer(_ handle: OpaquePointer?, _ length: UnsafeMutablePointer<Int>?) -> UnsafeRawPointer? {
    length?.pointee = 0
    guard let request = CRequest.find(handle) else { return nil }
    let buffer = request.takeReceiveBuffer()
    length?.pointee = buffer.count
    return buffer.count > 0 ? UnsafeRawPointer(buffer.baseAddress) : nil
}

@c @implementation
public func cxhr_get_failure_kind(_ handle: OpaquePointer?) -> cxhr_failure_kind {
    guard let kind = CRequest.find(handle)?.request.getFailureKind() else { return CXHR_FAILURE_NONE }
    // Exhaustive on purpose: a new FailureKind does not compile until it has a C name.
    switch kind {
    case .aborted: return CXHR_FAILURE_ABORTED
    case .dns: return CXHR_FAILURE_DNS
    case .connection: return CXHR_FAILURE_CONNECTION
    case .tls: return CXHR_FAILURE_TLS
    case .timeout: return CXHR_FAILURE_TIMEOUT
    case .redirects: return CXHR_FAILURE_REDIRECTS
    case .proxy: return CXHR_FAILURE_PROXY
    case .response: return CXHR_FAILURE_RESPONSE
    case .authentication: return CXHR_FAILURE_AUTHENTICATION
    case .other: return CXHR_FAILURE_OTHER
    }
}

@c @implementation
public func cxhr_get_bytes_sent(_ handle: OpaquePointer?) -> Int64 {
    CRequest.find(handle)?.request.getBytesSent() ?? 0
}

@c @implementation
public func cxhr_get_metrics(_ handle: OpaquePointer?, _ metrics: UnsafeMutablePointer<cxhr_metrics>?) -> Bool {
    let unknown = cxhr_metrics(http_version: nil, effective_url: nil, redirect_count: 0,
                               connect_s: -1, start_transfer_s: -1, total_s: -1)
    metrics?.pointee = unknown
    guard let request = CRequest.find(handle), let metrics else { return false }
    let measured = request.request.getMetrics()
    metrics.pointee = cxhr_metrics(
        http_version: request.keep(measured.httpVersion, as: "metrics http version"),
        effective_url: request.keep(measured.effectiveURL, as: "metrics effective url"),
        redirect_count: Int64(measured.redirectCount),
        connect_s: measured.connectTime ?? -1, start_transfer_s: measured.startTransferTime ?? -1,
        total_s: measured.totalTime ?? -1)
    return true
}

@c @implementation
public func cxhr_get_last_error(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let request = CRequest.find(handle) else { return nil }
    return request.keep(request.lastError, as: "last error")
}

@c @implementation
public func cxhr_get_last_error_code(_ handle: OpaquePointer?) -> cxhr_error_code {
    guard let request = CRequest.find(handle) else { return CXHR_ERROR_NONE }
    switch request.lastErrorCode {
    case nil: return CXHR_ERROR_NONE
    case .invalidState?: return CXHR_ERROR_INVALID_STATE
    case .invalidArgument?: return CXHR_ERROR_INVALID_ARGUMENT
    case .fileUnreadable?: return CXHR_ERROR_FILE_UNREADABLE
    case .fileUnwritable?: return CXHR_ERROR_FILE_UNWRITABLE
    case .queueFull?: return CXHR_ERROR_QUEUE_FULL
    default: return CXHR_ERROR_OTHER
    }
}

// MARK: Kerberos

/// A process-wide string handed to C: the copy stays valid until the string changes.
private final class KeptText: Sendable {
    private let kept = Locked<(text: String, copy: UnsafeMutablePointer<CChar>?)>(("", nil))

    func pointer(to text: String) -> UnsafePointer<CChar> {
        kept.withLock { kept in
            if kept.text != text || kept.copy == nil {
                free(kept.copy)
                kept = (text, strdup(text))
            }
            return UnsafePointer(kept.copy!)
        }
    }
}

private let kerberosCacheFileText = KeptText()
private let cookieFileText = KeptText()

@c @implementation
public func cxhr_kerberos_set_cache_file(_ path: UnsafePointer<CChar>?) {
    KerberosCredentials.cacheFile = path.map { String(cString: $0) } ?? KerberosCredentials.defaultCacheFile
}

@c @implementation
public func cxhr_kerberos_get_cache_file() -> UnsafePointer<CChar> {
    kerberosCacheFileText.pointer(to: KerberosCredentials.cacheFile)
}

@c @implementation
public func cxhr_kerberos_set_allow_delegation(_ allow: Bool) {
    KerberosCredentials.allowDelegation = allow
}

@c @implementation
public func cxhr_kerberos_get_allow_delegation() -> Bool {
    KerberosCredentials.allowDelegation
}

@c @implementation
public func cxhr_kerberos_clear_credentials(_ method: UnsafePointer<CChar>?) -> Bool {
    KerberosCredentials.clearCredentials(forMethod: method.map { String(cString: $0) })
}

@c @implementation
public func cxhr_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(CRequest.version.utf8Start).assumingMemoryBound(to: CChar.self)
}
