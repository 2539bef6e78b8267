// The routing calls of curlxhr.h (cxhr_set_resolve and its kin) and cxhr_send_file_range, in
// CAPI.swift's style: the handle is looked up first, NULLs are refused with a reason.
import CurlXHRHeader
import CurlXHR

/// Why a C list of entries cannot be read.
private struct ListProblem: Error {
    let reason: String
}

/// The `count` strings at `entries`, or why they cannot be read: a NULL array with a count, a
/// NULL entry, more entries than the library takes (none of them read; a count above
/// PTRDIFF_MAX included).
private func strings(_ entries: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int, option: String) -> Result<[String], ListProblem> {
    // size_t arrives as Int: a count above PTRDIFF_MAX is negative here.
    guard count >= 0, count <= 1000 else {
        return .failure(ListProblem(reason: "\(UInt(bitPattern: count)) \(option) entries: at most 1000 are taken"))
    }
    guard count > 0 else { return .success([]) }
    guard let entries else { return .failure(ListProblem(reason: "entries is NULL but count is not 0")) }
    var list: [String] = []
    list.reserveCapacity(count)
    for index in 0..<count {
        guard let entry = entries[index] else { return .failure(ListProblem(reason: "entry \(index) is NULL")) }
        list.append(String(cString: entry))
    }
    return .success(list)
}

/// Reads the list and hands it to `set`, or refuses the call with why it cannot be read.
private func setEntries(_ handle: OpaquePointer?, _ entries: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int, option: String,
                        _ set: (HttpRequest, [String]) -> Bool) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    switch strings(entries, count, option: option) {
    case .failure(let problem): return request.refuse(problem.reason)
    case .success(let list): return request.call { set($0, list) }
    }
}

@c @implementation
public func cxhr_set_resolve(_ handle: OpaquePointer?, _ entries: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> Bool {
    setEntries(handle, entries, count, option: "--resolve") { $0.setResolve($1) }
}

@c @implementation
public func cxhr_set_connect_to(_ handle: OpaquePointer?, _ entries: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> Bool {
    setEntries(handle, entries, count, option: "--connect-to") { $0.setConnectTo($1) }
}

@c @implementation
public func cxhr_set_unix_socket(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Bool {
    CRequest.find(handle)?.call { $0.setUnixSocket(path.map { String(cString: $0) }) } ?? false
}

@c @implementation
public func cxhr_set_interface(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Bool {
    CRequest.find(handle)?.call { $0.setInterface(name.map { String(cString: $0) }) } ?? false
}

@c @implementation
public func cxhr_set_service_name(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Bool {
    CRequest.find(handle)?.call { $0.setServiceName(name.map { String(cString: $0) }) } ?? false
}

@c @implementation
public func cxhr_set_proxy_service_name(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Bool {
    CRequest.find(handle)?.call { $0.setProxyServiceName(name.map { String(cString: $0) }) } ?? false
}

@c @implementation
public func cxhr_disable_connection_reuse(_ handle: OpaquePointer?) -> Bool {
    CRequest.find(handle)?.call { $0.disableConnectionReuse() } ?? false
}

@c @implementation
public func cxhr_send_file_range(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ offset: Int64,
                                 _ length: Int64, _ timeout: Double) -> Bool {
    guard let request = CRequest.find(handle) else { return false }
    guard let path else { return request.refuse("path is required") }
    return request.call { $0.sendWithFile(String(cString: path), offset: offset, length: length, timeout: timeout) }
}
