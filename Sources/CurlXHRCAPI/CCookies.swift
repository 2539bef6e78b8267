// The cookie jar from C: cxhr_cookies_list / _free / _set / _delete over CookieStore.shared.
import CurlXHRHeader
import CurlXHR
#if canImport(Glibc)
import Glibc
#endif

/// A C string as Swift text: nil for NULL and for bytes that are not UTF-8 (never repaired,
/// so a cookie is never stored or matched under a name it was not given).
private func text(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.flatMap { String(validatingCString: $0) }
}

/// Whether text could corrupt the jar's line format (tabs, line breaks, other controls).
private func hasControlCharacters(_ text: String) -> Bool {
    text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
}

/// The Swift cookie a `cxhr_cookie` describes; nil for missing or non-UTF-8 text.
private func cookie(from pointer: UnsafePointer<cxhr_cookie>?) -> Cookie? {
    guard let c = pointer?.pointee, let name = text(c.name), let domain = text(c.domain) else { return nil }
    guard let value = c.value == nil ? "" : text(c.value), let path = c.path == nil ? "/" : text(c.path) else { return nil }
    return Cookie(name: name, value: value, domain: domain, includesSubdomains: c.include_subdomains, path: path,
                  isSecure: c.secure, isHTTPOnly: c.http_only, expires: c.expires == 0 ? nil : c.expires)
}

/// The list is one allocation: the array, then the strings it points to, so
/// cxhr_cookies_free is one free() and a caller who reorders the array loses nothing.
@c @implementation
public func cxhr_cookies_list(_ url: UnsafePointer<CChar>?, _ count: UnsafeMutablePointer<Int>?) -> UnsafeMutablePointer<cxhr_cookie>? {
    count?.pointee = 0
    guard let count else { return nil }
    let cookies: [Cookie]
    if let url {
        guard let url = text(url) else { return nil }
        cookies = CookieStore.shared.cookies(for: url)
    } else {
        cookies = CookieStore.shared.allCookies()
    }
    guard !cookies.isEmpty else { return nil }
    let arrayBytes = MemoryLayout<cxhr_cookie>.stride * cookies.count
    let textBytes = cookies.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + $1.domain.utf8.count + $1.path.utf8.count + 4 }
    guard let block = malloc(arrayBytes + textBytes) else { return nil }
    let array = block.bindMemory(to: cxhr_cookie.self, capacity: cookies.count)
    var next = (block + arrayBytes).assumingMemoryBound(to: CChar.self)
    func copy(_ text: String) -> UnsafePointer<CChar> {
        let start = next
        for byte in text.utf8 {
            next.pointee = CChar(bitPattern: byte)
            next += 1
        }
        next.pointee = 0
        next += 1
        return UnsafePointer(start)
    }
    for (index, cookie) in cookies.enumerated() {
        (array + index).initialize(to: cxhr_cookie(
            name: copy(cookie.name), value: copy(cookie.value), domain: copy(cookie.domain), path: copy(cookie.path),
            include_subdomains: cookie.includesSubdomains, secure: cookie.isSecure, http_only: cookie.isHTTPOnly,
            expires: cookie.expires ?? 0))
    }
    count.pointee = cookies.count
    return array
}

@c @implementation
public func cxhr_cookies_free(_ cookies: UnsafeMutablePointer<cxhr_cookie>?, _ count: Int) {
    // size_t arrives as Int: a count above PTRDIFF_MAX is negative here, and no list has it.
    guard let cookies, count >= 0 else { return }
    free(cookies)
}

@c @implementation
public func cxhr_cookies_set(_ pointer: UnsafePointer<cxhr_cookie>?) -> Bool {
    guard let cookie = cookie(from: pointer), cookie.expires.map({ $0 >= 0 }) ?? true else { return false }
    return CookieStore.shared.setCookie(cookie)
}

@c @implementation
public func cxhr_cookies_delete(_ pointer: UnsafePointer<cxhr_cookie>?) -> Bool {
    guard var cookie = cookie(from: pointer),
          ![cookie.name, cookie.domain, cookie.path].contains(where: hasControlCharacters) else { return false }
    cookie.value = ""
    // libcurl replaces a cookie only when the flags agree too (a Domain= cookie is not the
    // host-only one of the same name), so delete what the jar holds under this name, domain
    // and path, with its own flags; the cookie as given if the jar has none.
    // Byte for byte: Swift's == would take "é" and "e" with a combining accent for one name.
    let domain = Array(cookie.domain.lowercased().utf8)
    var held = CookieStore.shared.allCookies().filter {
        $0.name.utf8.elementsEqual(cookie.name.utf8) && $0.domain.lowercased().utf8.elementsEqual(domain)
            && $0.path.utf8.elementsEqual(cookie.path.utf8)
    }
    if held.isEmpty { held = [cookie] }
    for target in held { CookieStore.shared.deleteCookie(target) }
    return true
}
