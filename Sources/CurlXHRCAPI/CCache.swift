// The HTTP cache from C: cxhr_set_cache_folder / cxhr_get_cache_folder_error (process-wide)
// and cxhr_set_cache_policy / cxhr_is_response_from_cache (per request), over
// HttpRequest.setCacheFolder, cacheFolderError, setCachePolicy and isResponseFromCache.
import CurlXHRHeader
import CurlXHR
#if canImport(Glibc)
import Glibc
#endif

/// The bits of `cxhr_set_cache_policy` the header names, and the Swift option of each (mapped
/// one by one, not by raw value, so the two sets of numbers cannot drift apart unnoticed).
private let policyBits: [(bit: UInt32, option: HttpRequest.CachePolicy)] = [
    (UInt32(CXHR_CACHE_READ), .read), (UInt32(CXHR_CACHE_READ_FORCED), .readForced),
    (UInt32(CXHR_CACHE_UPDATE), .update), (UInt32(CXHR_CACHE_UPDATE_FORCED), .updateForced),
]

/// The reason of the last refused `cxhr_set_cache_folder` as C text (nil after a success),
/// replaced by the next call. The lock also keeps C callers of `cxhr_set_cache_folder` apart,
/// so the reason read after a refusal is that refusal's.
private let cacheFolderRefusal = Locked<UnsafeMutablePointer<CChar>?>(nil)

@c @implementation
public func cxhr_set_cache_folder(_ path: UnsafePointer<CChar>?, _ maxBytes: Int64) -> Bool {
    cacheFolderRefusal.withLock { kept in
        let reason: String?
        if let path, String(validatingCString: path) == nil {
            // Never repaired: a folder would be made under a name the caller did not give.
            reason = "the cache folder's path is not UTF-8"
        } else if HttpRequest.setCacheFolder(path.map { String(cString: $0) }, maxBytes: maxBytes) {
            reason = nil
        } else {
            reason = HttpRequest.cacheFolderError ?? "the cache folder cannot be used"
        }
        free(kept)
        kept = reason.map { strdup($0) }
        return reason == nil
    }
}

@c @implementation
public func cxhr_get_cache_folder_error() -> UnsafePointer<CChar>? {
    cacheFolderRefusal.withLock { $0.map { UnsafePointer($0) } }
}

@c @implementation
public func cxhr_set_cache_policy(_ handle: OpaquePointer?, _ policy: UInt32) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    var options: HttpRequest.CachePolicy = []
    var unknown = policy
    for (bit, option) in policyBits where policy & bit != 0 {
        options.insert(option)
        unknown &= ~bit
    }
    guard unknown == 0 else {
        return request.refuse("the cache policy has bits no CXHR_CACHE_* names (0x\(String(unknown, radix: 16)))")
    }
    return request.call { $0.setCachePolicy(options) }
}

@c @implementation
public func cxhr_is_response_from_cache(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.request.isResponseFromCache() ?? false
}
