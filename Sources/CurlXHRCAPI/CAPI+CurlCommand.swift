// cxhr_curl_command of curlxhr.h, in CAPI.swift's style.
import CurlXHRHeader
import CurlXHR
#if canImport(Glibc)
import Glibc
#endif

/// The caller's own copy (freed with `free()`), not one the request keeps.
@c @implementation
public func cxhr_curl_command(_ handle: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    guard let request = CRequest.find(handle) else { return nil }
    return strdup(request.request.curlCommand())
}
