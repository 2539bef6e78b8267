// cxhr_set_rate_limits of curlxhr.h, in CAPI.swift's style.
import CurlXHRHeader
import CurlXHR

@c @implementation
public func cxhr_set_rate_limits(_ handle: OpaquePointer?, _ download: Int64, _ upload: Int64) -> Bool {
    CRequest.find(handle)?.call { $0.setRateLimits(download: download, upload: upload) } ?? false
}
