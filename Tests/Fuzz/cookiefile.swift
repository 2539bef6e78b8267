// libFuzzer target: the cookie store file reader.
//
// The input is the content of a store file (libcurl's Netscape format). Checked:
// - CookieStore.parseStore either finds the file damaged and keeps nothing, or keeps lines that
//   each parse as a persistent cookie, unexpired, under its key;
// - what it keeps, written as the store writes it, reads back the same (no damage, the same
//   cookies): a write and a read lose nothing;
// - a cookie that setCookie would accept (no `problem`) survives netscapeLine and
//   Cookie(netscapeLine:) unchanged, and given to libcurl's cookie engine as setCookie gives
//   it, becomes that cookie or none (libcurl refuses some, public suffixes for one), never
//   another;
// - libcurl's cookie engine, given the kept lines as the store loads them
//   (CURLOPT_COOKIELIST), holds only cookies that Cookie(netscapeLine:) reads back and that
//   survive netscapeLine unchanged: allCookies(), the store's merge and deleteCookie see
//   every cookie libcurl has, as libcurl has it.
import CCurlShim
@testable import CurlXHR

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("property violated: \(message())") }
}

/// A fixed clock, so that a run replays the same way whenever it runs.
private let now: Int64 = 1_750_000_000

/// One easy handle with its cookie engine on, as the engine's cookie handle.
nonisolated(unsafe) private let jar: UnsafeMutableRawPointer = {
    let handle = curl_easy_init()!
    _ = cxhr_easy_set_string(handle, CURLOPT_COOKIEFILE, "")
    return handle
}()

/// The store's own format (CookieStore.writeFile).
private func storeFile(_ lines: [String]) -> [UInt8] {
    var text = "# Netscape HTTP Cookie File\n# Written by CurlXHR: persistent cookies only.\n\n"
    for line in lines.sorted() { text += line + "\n" }
    return Array(text.utf8)
}

private func jarLines() -> [String] {
    CookieStore.cookieLines(jar)
}

private func checkRoundTrip(_ cookie: Cookie, _ origin: String) {
    let again = Cookie(netscapeLine: cookie.netscapeLine)
    check(again == cookie, "\(origin) \(cookie) becomes \(String(describing: again)) through netscapeLine")
}

/// A line of libcurl's jar as the store reads it, which must read it back as it was.
private func checkedJarCookie(_ line: String) -> Cookie {
    guard let cookie = Cookie(netscapeLine: line) else {
        fatalError("property violated: libcurl holds \(line.debugDescription), which Cookie(netscapeLine:) refuses")
    }
    checkRoundTrip(cookie, "libcurl's cookie")
    return cookie
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookieFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // Every line on its own, whether or not the file as a whole is usable.
    for raw in bytes.split(separator: 0x0A) {
        if let cookie = Cookie(netscapeLine: String(decoding: raw, as: UTF8.self)), cookie.problem == nil {
            checkRoundTrip(cookie, "the line's cookie")
            // As setCookie hands it to libcurl.
            _ = cxhr_easy_set_string(jar, CURLOPT_COOKIELIST, "ALL")
            _ = cxhr_easy_set_string(jar, CURLOPT_COOKIELIST, cookie.netscapeLine)
            for line in jarLines() {
                let held = checkedJarCookie(line)
                check(held.key == cookie.key, "setCookie(\(cookie)) makes libcurl hold \(line.debugDescription)")
            }
        }
    }

    let (cookies, damage) = CookieStore.parseStore(bytes, now: now)
    if damage != nil {
        check(cookies.isEmpty, "a damaged file kept cookies")
        return 0
    }
    for (key, line) in cookies {
        guard let cookie = Cookie(netscapeLine: line) else { fatalError("property violated: kept \(line.debugDescription), no cookie") }
        check(cookie.key == key, "kept \(line.debugDescription) under \(key.debugDescription)")
        check(cookie.isPersistent && !cookie.isExpired(at: now), "kept a session or expired cookie")
    }

    let (reread, rereadDamage) = CookieStore.parseStore(storeFile(Array(cookies.values)), now: now)
    check(rereadDamage == nil, "the store's own file is damaged: \(rereadDamage ?? "")")
    check(reread == cookies, "a write and a read changed \(cookies) into \(reread)")

    // libcurl's jar, as CookieStore.load fills it.
    _ = cxhr_easy_set_string(jar, CURLOPT_COOKIELIST, "ALL")
    for line in cookies.values { _ = cxhr_easy_set_string(jar, CURLOPT_COOKIELIST, line) }
    for line in jarLines() { _ = checkedJarCookie(line) }
    return 0
}
