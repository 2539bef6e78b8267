// The request's TLS identity and the server keys it accepts, as curlxhr.h declares them.
import CurlXHRHeader
import CurlXHR

extension HttpRequest.CertificateFormat {
    /// The format a `cxhr_cert_format` names, or nil for a value that is none.
    init?(_ format: cxhr_cert_format) {
        switch format {
        case CXHR_CERT_PEM: self = .pem
        case CXHR_CERT_DER: self = .der
        case CXHR_CERT_P12: self = .pkcs12
        default: return nil
        }
    }
}

@c @implementation
public func cxhr_set_client_certificate(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: cxhr_cert_format,
                                        _ keyPath: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) -> Bool {
    setCertificate(handle, path, format, keyPath, password) { $0.setClientCertificate($1, format: $2, keyPath: $3, password: $4) }
}

/// A certificate call's arguments checked and converted, then `set` on the request.
private func setCertificate(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: cxhr_cert_format,
                            _ keyPath: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?,
                            _ set: (HttpRequest, String, HttpRequest.CertificateFormat, String?, String?) -> Bool) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path else { return request.refuse("path is required") }
    guard let format = HttpRequest.CertificateFormat(format) else { return request.refuse("\(format.rawValue) is not a cxhr_cert_format") }
    return request.call { set($0, String(cString: path), format, keyPath.map { String(cString: $0) }, password.map { String(cString: $0) }) }
}

@c @implementation
public func cxhr_set_client_certificate_p12(_ handle: OpaquePointer?, _ data: UnsafeRawPointer?, _ length: Int,
                                            _ password: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let data, length > 0 else { return request.refuse("the PKCS#12 data is empty") }
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: length))
    return request.call { $0.setClientCertificate(pkcs12Bytes: bytes, password: password.map { String(cString: $0) }) }
}

@c @implementation
public func cxhr_set_pinned_public_keys(_ handle: OpaquePointer?, _ pins: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let pins else { return request.refuse("pins are required (\"\" removes them)") }
    return request.call { $0.setPinnedPublicKeys(String(cString: pins)) }
}

@c @implementation
public func cxhr_set_proxy_client_certificate(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ format: cxhr_cert_format,
                                              _ keyPath: UnsafePointer<CChar>?, _ password: UnsafePointer<CChar>?) -> Bool {
    setCertificate(handle, path, format, keyPath, password) { $0.setProxyClientCertificate($1, format: $2, keyPath: $3, password: $4) }
}

@c @implementation
public func cxhr_set_proxy_pinned_public_keys(_ handle: OpaquePointer?, _ pins: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let pins else { return request.refuse("pins are required (\"\" removes them)") }
    return request.call { $0.setProxyPinnedPublicKeys(String(cString: pins)) }
}
