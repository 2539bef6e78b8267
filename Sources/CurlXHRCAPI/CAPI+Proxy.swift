// The request's proxy in general form, as curlxhr.h declares it.
import CurlXHRHeader
import CurlXHR

@c @implementation
public func cxhr_set_proxy(_ handle: OpaquePointer?, _ url: UnsafePointer<CChar>?, _ user: UnsafePointer<CChar>?,
                           _ password: UnsafePointer<CChar>?, _ auth: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let url else { return request.refuse("url is required") }
    return request.call {
        $0.setProxy(String(cString: url), user: user.map { String(cString: $0) }, password: password.map { String(cString: $0) },
                    auth: auth.map { String(cString: $0) })
    }
}

@c @implementation
public func cxhr_set_proxy_bypass(_ handle: OpaquePointer?, _ hosts: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let hosts else { return request.refuse("hosts are required (\"\" removes them)") }
    return request.call { $0.setProxyBypass(String(cString: hosts)) }
}

@c @implementation
public func cxhr_set_proxy_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let name, let value else { return request.refuse("name and value are required") }
    return request.call { $0.setProxyHeader(String(cString: name), value: String(cString: value)) }
}

@c @implementation
public func cxhr_set_proxy_ca_certificate_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path else { return request.refuse("path is required") }
    return request.call { $0.setProxyCACertificateFile(String(cString: path)) }
}

@c @implementation
public func cxhr_set_proxy_auto_config(_ handle: OpaquePointer?, _ location: UnsafePointer<CChar>?) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let location else { return request.refuse("location is required") }
    return request.call { $0.setProxyAutoConfig(String(cString: location)) }
}

@c @implementation
public func cxhr_set_default_proxy_auto_config(_ location: UnsafePointer<CChar>?) -> Bool {
    HttpRequest.setDefaultProxyAutoConfig(location.map { String(cString: $0) })
}

@c @implementation
public func cxhr_disable_proxy_peer_verification(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableProxyPeerVerification() } ?? false
}
