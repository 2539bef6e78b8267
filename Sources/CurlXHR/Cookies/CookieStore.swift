import CCurlShim
#if canImport(Glibc)
import Glibc
#endif

/// The process-wide cookie jar every request uses unless it calls
/// `disableCookieHandling()`, and its persistent store, mirroring what GDHttpRequest keeps.
///
/// The jar is libcurl's cookie engine (domain, path, secure and expiry matching, public
/// suffixes refused through libpsl), owned by the transfer engine. Persistent cookies (those
/// with an expiry) are kept in ``file`` in libcurl's Netscape format with mode 0600: a response
/// that changes them has them on disk, written to a temporary file, synced and renamed, before
/// its DONE is reported, so a crash right after DONE loses none. Session cookies never reach
/// the disk. Processes sharing one file lock it and merge their changes into it. A damaged
/// file is moved aside (`<file>.damaged`) with a line on standard error, and a fresh store
/// starts.
public final class CookieStore: Sendable {
    /// The store every request uses.
    public static let shared = CookieStore()

    private struct State {
        var file: String?
        /// Whether the file has been read into the jar.
        var isLoaded = false
        /// The persistent cookies as they were when this process last read or wrote the
        /// file, by key: the base of the three-way merge with the file.
        var synced: [String: String] = [:]
    }

    private let state = Locked(State())

    private init() {}

    /// Where persistent cookies are kept: by default `$XDG_DATA_HOME/curlxhr/cookies.txt`, else
    /// `~/.local/share/curlxhr/cookies.txt`. Set it before the first request to keep them
    /// elsewhere; set later, the jar is emptied and filled from the new file.
    public var file: String {
        get { state.withLock { $0.file } ?? Self.defaultFile }
        set {
            let wasLoaded = state.withLock { state in
                state.file = newValue
                return state.isLoaded
            }
            if wasLoaded {
                TransferEngine.shared.withCookieHandle { handle in
                    _ = cxhr_easy_set_string(handle, CURLOPT_COOKIELIST, "ALL")
                    CookieStore.shared.load(into: handle)
                }
            }
        }
    }

    /// `$XDG_DATA_HOME/curlxhr/cookies.txt`, else `~/.local/share/curlxhr/cookies.txt`.
    public static var defaultFile: String {
        if let data = getenv("XDG_DATA_HOME"), data.pointee != 0 {
            return String(cString: data) + "/curlxhr/cookies.txt"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/share/curlxhr/cookies.txt"
    }

    // MARK: Managing the jar

    /// Every cookie in the jar, session cookies included; expired ones are left out.
    public func allCookies() -> [Cookie] {
        let now = Int64(time(nil))
        let lines = Locked<[String]>([])
        TransferEngine.shared.withCookieHandle { handle in
            let list = Self.cookieLines(handle)
            lines.withLock { $0 = list }
        }
        return lines.withLock { $0 }.compactMap(Cookie.init(netscapeLine:)).filter { !$0.isExpired(at: now) }
    }

    /// The cookies a request to `url` would carry; empty for a URL that is not http or https.
    public func cookies(for url: String) -> [Cookie] {
        guard let url = HTTPURL(url) else { return [] }
        let now = Int64(time(nil))
        return allCookies().filter { $0.matches(url, at: now) }
    }

    /// The `Cookie` value the jar adds to a request to `url` ("" for none): its cookies as
    /// `name=value` pairs joined by "; ", longer paths first (as libcurl orders them), then by
    /// name. Waits for the engine thread: never call it holding a request's lock.
    func cookieHeader(for url: String) -> String {
        cookies(for: url).sorted { ($0.path.utf8.count, $1.name) > ($1.path.utf8.count, $0.name) }
            .map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Adds a cookie, or replaces the one with the same domain, path and name. A persistent
    /// cookie is on disk when this returns.
    /// - Returns: `false` for a cookie that could not be sent as given (control characters,
    ///   `;` in the value, an empty or malformed name, domain or path), or whose domain is a
    ///   public suffix ("com", "co.uk": refused as the jar refuses it from a response).
    @discardableResult
    public func setCookie(_ cookie: Cookie) -> Bool {
        guard cookie.problem == nil else { return false }
        let line = cookie.netscapeLine
        TransferEngine.shared.withCookieHandle { handle in
            _ = cxhr_easy_set_string(handle, CURLOPT_COOKIELIST, line)
            CookieStore.shared.persist(from: handle)
        }
        return true
    }

    /// Removes the cookie with the same domain, path and name, from the jar and the file.
    public func deleteCookie(_ cookie: Cookie) {
        var expired = cookie
        expired.expires = 1
        let line = expired.netscapeLine
        TransferEngine.shared.withCookieHandle { handle in
            _ = cxhr_easy_set_string(handle, CURLOPT_COOKIELIST, line)
            CookieStore.shared.persist(from: handle)
        }
    }

    /// Empties the jar. Without `includePersistentStore` the file is left alone, so its
    /// cookies come back at the next launch; with it, they are removed from the file too.
    public func removeAll(includePersistentStore: Bool) {
        TransferEngine.shared.withCookieHandle { handle in
            _ = cxhr_easy_set_string(handle, CURLOPT_COOKIELIST, "ALL")
            let store = CookieStore.shared
            if includePersistentStore {
                store.state.withLock { $0.synced = [:] }
                store.writeFile { _ in [:] }
            } else {
                // Forget what was read, so the next merge keeps the file's cookies.
                store.state.withLock { $0.synced = [:] }
            }
        }
    }

    // MARK: Engine thread

    /// Reads the file into the jar. Engine thread (or before it starts).
    func load(into handle: UnsafeMutableRawPointer) {
        let path = file
        var loaded: [String: String] = [:]
        PrivateFiles.withLock(on: path) {
            loaded = readStore(path)
        }
        for line in loaded.values {
            _ = cxhr_easy_set_string(handle, CURLOPT_COOKIELIST, line)
        }
        state.withLock {
            $0.isLoaded = true
            $0.synced = loaded
        }
    }

    /// Writes the jar's persistent cookies to the file if they changed since the last
    /// read or write, merged with what other processes wrote meanwhile. Engine thread.
    func persist(from handle: UnsafeMutableRawPointer) {
        let now = Int64(time(nil))
        var current: [String: String] = [:]
        for line in Self.cookieLines(handle) {
            guard let cookie = Cookie(netscapeLine: line), cookie.isPersistent, !cookie.isExpired(at: now) else { continue }
            current[cookie.key] = line
        }
        let base = state.withLock { $0.synced }
        guard current != base else { return }
        writeFile { disk in
            // Three-way merge: what this process changed since `base` wins; the rest is the file's.
            var merged: [String: String] = [:]
            for key in Set(disk.keys).union(current.keys).union(base.keys) {
                let mine = current[key]
                if mine != base[key] {
                    if let mine { merged[key] = mine }
                } else if let theirs = disk[key] {
                    merged[key] = theirs
                }
            }
            return merged
        }
        state.withLock { $0.synced = current }
    }

    // MARK: The file

    /// The jar of `handle` as libcurl lists it, one Netscape line a cookie.
    static func cookieLines(_ handle: UnsafeMutableRawPointer) -> [String] {
        var list: UnsafeMutablePointer<curl_slist>?
        guard cxhr_easy_get_slist(handle, CURLINFO_COOKIELIST, &list) == CURLE_OK else { return [] }
        defer { curl_slist_free_all(list) }
        var lines: [String] = []
        var node = list
        while let current = node {
            if let data = current.pointee.data { lines.append(String(cString: data)) }
            node = current.pointee.next
        }
        return lines
    }

    /// Reads the file under the lock, keyed; a damaged file is moved aside and counts as empty.
    private func readStore(_ path: String) -> [String: String] {
        guard let bytes = readAll(path) else { return [:] }
        let (cookies, damage) = Self.parseStore(bytes, now: Int64(time(nil)))
        if let damage {
            setAside(path, because: damage)
            return [:]
        }
        return cookies
    }

    /// The persistent cookies of a store file's bytes that have not expired at `now`, their
    /// lines keyed by ``Cookie/key``; or why the file is damaged (a line that is not text or
    /// not a cookie), with no cookies.
    static func parseStore(_ bytes: [UInt8], now: Int64) -> (cookies: [String: String], damage: String?) {
        var cookies: [String: String] = [:]
        for (number, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            var lineBytes = Array(raw)
            // Every CR at the end: a line read is written back as it was read, and reads the same.
            while lineBytes.last == UInt8(ascii: "\r") { lineBytes.removeLast() }
            guard let line = String(validating: lineBytes, as: UTF8.self), !line.contains("\0") else {
                return ([:], "line \(number + 1) is not text")
            }
            if line.isEmpty || (line.utf8.first == UInt8(ascii: "#") && !line.utf8.starts(with: "#HttpOnly_".utf8)) { continue }
            guard let cookie = Cookie(netscapeLine: line) else {
                return ([:], "line \(number + 1) is not a cookie in Netscape format")
            }
            if cookie.isPersistent, !cookie.isExpired(at: now) { cookies[cookie.key] = line }
        }
        return (cookies, nil)
    }

    private func readAll(_ path: String) -> [UInt8]? {
        do {
            return try PrivateFiles.contents(of: path)
        } catch {
            if error.code != ENOENT { setAside(path, because: error.description) }
            return nil
        }
    }

    private func setAside(_ path: String, because reason: String) {
        let aside = path + ".damaged"
        let moved = rename(path, aside) == 0
        let outcome = moved ? "moved it to \(aside)" : "could not move it aside (\(String(cString: strerror(errno))))"
        Self.log("the cookie store \(MessageValidation.escaped(path)) cannot be used (\(reason)); \(outcome) and started a fresh store")
    }

    /// Under the file lock: reads the file, lets `merge` decide the new content, and replaces
    /// the file atomically (temporary file, fsync, rename, fsync of the directory).
    private func writeFile(_ merge: ([String: String]) -> [String: String]) {
        let path = file
        PrivateFiles.withLock(on: path) {
            let content = merge(readStore(path)).values.sorted()
            var text = "# Netscape HTTP Cookie File\n# Written by CurlXHR: persistent cookies only.\n\n"
            for line in content { text += line + "\n" }
            do {
                try PrivateFiles.replace(path, with: Array(text.utf8))
            } catch {
                Self.log("could not write the cookie store \(MessageValidation.escaped(path)): \(error)")
            }
        }
    }

    private static func log(_ text: String) { PrivateFiles.log(text) }
}
