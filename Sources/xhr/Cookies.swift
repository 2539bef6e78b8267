import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// curl's -b and -c over the library's process-wide jar, `CookieStore.shared`.
enum Cookies {
    // MARK: -b FILE

    /// Adds the cookies of a Netscape-format file (what -c and curl's -c write; `-` reads
    /// standard input) to the jar, session cookies too; expired ones and lines that are not
    /// cookies are skipped. A file that cannot be read adds nothing, as with curl.
    static func load(file path: String) {
        let bytes = path == "-" ? StandardStreams.readAll(0) : StandardStreams.read(file: path)
        guard let bytes else { return }
        let now = Int64(time(nil))
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            guard let cookie = cookie(netscapeLine: String(line)), cookie.expires.map({ $0 > now }) ?? true else { continue }
            CookieStore.shared.setCookie(cookie)
        }
    }

    /// One line of the Netscape cookie file format: domain, include-subdomains, path,
    /// secure, expiry (0: a session cookie), name, value; `#HttpOnly_` before the domain.
    static func cookie(netscapeLine line: String) -> Cookie? {
        var line = Substring(line)
        if line.hasSuffix("\r") { line = line.dropLast() }
        let httpOnly = line.hasPrefix("#HttpOnly_")
        if httpOnly { line = line.dropFirst("#HttpOnly_".count) } else if line.hasPrefix("#") { return nil }
        var fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        if fields.count == 6 { fields.append("") }
        guard fields.count == 7, let expires = Int64(fields[4]), !fields[5].isEmpty else { return nil }
        var domain = Substring(fields[0])
        if domain.hasPrefix(".") { domain = domain.dropFirst() }
        guard !domain.isEmpty else { return nil }
        return Cookie(name: fields[5], value: fields[6], domain: String(domain),
                      includesSubdomains: fields[1].uppercased() == "TRUE", path: fields[2],
                      isSecure: fields[3].uppercased() == "TRUE", isHTTPOnly: httpOnly,
                      expires: expires == 0 ? nil : expires)
    }

    static func netscapeLine(_ cookie: Cookie) -> String {
        let domain = (cookie.isHTTPOnly ? "#HttpOnly_" : "") + (cookie.includesSubdomains ? "." : "") + cookie.domain
        return [domain, cookie.includesSubdomains ? "TRUE" : "FALSE", cookie.path, cookie.isSecure ? "TRUE" : "FALSE",
                String(cookie.expires ?? 0), cookie.name, cookie.value].joined(separator: "\t")
    }

    // MARK: -b 'NAME=VALUE; …'

    /// Cookies put in the jar for one transfer, and those of the jar they replaced.
    struct Sent {
        var added: [Cookie]
        var replaced: [Cookie]

        /// Takes the added cookies out of the jar (unless a response changed them) and puts
        /// back what they replaced.
        func restore() {
            let now = CookieStore.shared.allCookies()
            for cookie in added where now.contains(cookie) {
                CookieStore.shared.deleteCookie(cookie)
            }
            for cookie in replaced where !now.contains(where: { Self.sameKey($0, cookie) && !added.contains($0) }) {
                CookieStore.shared.setCookie(cookie)
            }
        }

        static func sameKey(_ a: Cookie, _ b: Cookie) -> Bool {
            a.name == b.name && a.domain.lowercased() == b.domain.lowercased() && a.path == b.path
                && a.includesSubdomains == b.includesSubdomains
        }
    }

    /// Puts `NAME=VALUE; …` in the jar as session cookies of the URL's host, path `/`, so
    /// they go in the jar's one Cookie line. Nil (nothing changed) when the URL has no host
    /// or a pair cannot be a cookie: the caller then sends a Cookie header.
    static func send(_ text: String, to url: String) -> Sent? {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty, !host.contains(":") else { return nil }
        var cookies: [Cookie] = []
        for pair in text.split(separator: ";") {
            let pair = Text.trimmed(pair)
            if pair.isEmpty { continue }
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let name = Text.trimmed(pair[..<equals])
            let value = Text.trimmed(pair[pair.index(after: equals)...])
            guard !name.isEmpty, !name.contains(" "), !value.contains(where: { $0.isNewline || $0 == "\t" }) else { return nil }
            cookies.append(Cookie(name: name, value: value, domain: host.lowercased(), path: "/"))
        }
        let held = CookieStore.shared.allCookies()
        let replaced = held.filter { old in cookies.contains { Sent.sameKey($0, old) } }
        var added: [Cookie] = []
        for cookie in cookies {
            guard CookieStore.shared.setCookie(cookie) else {
                Sent(added: added, replaced: replaced).restore()
                return nil
            }
            added.append(cookie)
        }
        return Sent(added: added, replaced: replaced)
    }

    // MARK: -c FILE

    /// Writes every cookie of the jar, session cookies too, to `path` (`-`: standard output)
    /// in the Netscape format, as curl's -c does at the end; the file is replaced whole
    /// (mode 0600, under the store's lock; never through a planted link, as the library's own
    /// store). A failure is a warning, as with curl.
    static func writeJar(to path: String, console: Console) {
        let lines = CookieStore.shared.allCookies().map(netscapeLine)
        let text = "# Netscape HTTP Cookie File\n# Written by xhr: every cookie of the jar, session cookies too.\n\n"
            + lines.map { $0 + "\n" }.joined()
        if path == "-" {
            StandardStreams.write(text, to: 1)
            return
        }
        // The folder must exist (curl's -c makes none); its lock is the store's (no file).
        do throws(PrivateFiles.Failure) {
            let folder = try PrivateFiles.openFolder(of: path, creating: false)
            defer { close(folder) }
            while flock(folder, LOCK_EX) != 0 && errno == EINTR {}
            try PrivateFiles.replace(PrivateFiles.name(of: path), in: folder, with: Array(text.utf8))
        } catch {
            console.warn("could not write the cookies to \(path): \(error)")
        }
    }
}
