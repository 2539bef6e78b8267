import CurlXHR

/// The cache options: --cache DIR turns on the library's HTTP cache (RFC 9111's private cache,
/// shared with other runs and processes that name the same folder), --cache-max bounds it,
/// --offline answers from it alone.
struct CacheOptions {
    /// --cache-max's default: 1 GiB.
    static let defaultMaxBytes: Int64 = 1 << 30

    var folder: String?
    var maxBytesText: String?
    var offline = false

    static var section: OptionSection {
        OptionSection(title: "Cache", options: [
            .text(nil, "cache", "DIR", "Keep responses in the HTTP cache in DIR (xhr's own; made if missing, an existing folder used as it is; shared by "
                  + "the runs that name it) and answer from it while they are fresh, validating them with the server when stale.", { $0.cache.folder = $1 }),
            .text(nil, "cache-max", "BYTES", "With --cache: at most BYTES of responses in it, the least recently used dropped first (BYTES may end in K, M "
                  + "or G: KiB, MiB, GiB; default 1G).", { $0.cache.maxBytesText = $1 }),
            .flag(nil, "offline", "With --cache: answer from the cache only, whatever the age of the stored response, and send nothing; "
                  + "with nothing stored for the URL, exit 1 (GET and HEAD only; no -r, -C or Range header).", { $0.cache.offline = $1 }),
        ])
    }

    /// --cache-max in bytes (nil: not a size).
    var maxBytes: Int64? {
        guard let maxBytesText else { return Self.defaultMaxBytes }
        return Self.bytes(maxBytesText)
    }

    /// `N`, `NK`, `NM` or `NG` (binary multiples, as curl's sizes) → bytes; nil when not one of those or below 1.
    static func bytes(_ text: String) -> Int64? {
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = digits.last, let shift = ["k": 10, "m": 20, "g": 30][last.lowercased()] {
            unit = 1 << shift
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int64(digits), count >= 1 else { return nil }
        let (product, overflow) = count.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    func validate() throws {
        if folder == nil, offline { throw ValidationError("--offline needs --cache DIR, the cache it answers from") }
        if folder == nil, maxBytesText != nil { throw ValidationError("--cache-max needs --cache DIR") }
        if let maxBytesText, maxBytes == nil {
            throw ValidationError("--cache-max '\(maxBytesText)' is not a size of 1 byte or more (BYTES, or with a K, M or G suffix)")
        }
    }

    /// What --offline cannot answer from the cache, refused before anything starts (the
    /// library would end it with status 0).
    func validateOffline(method: String, ranged: Bool, fetchesToken: Bool) throws {
        guard offline else { return }
        if method != "GET", method != "HEAD" {
            throw ValidationError("--offline answers GET and HEAD from the cache; a \(method) is never answered from a cache")
        }
        if ranged { throw ValidationError("--offline cannot answer part of a body (-r, -C or a Range header) from the cache") }
        if fetchesToken { throw ValidationError("--offline sends nothing, so --oauth2-token-url cannot get a token (use --oauth2-bearer)") }
    }

    /// Turns on the cache in --cache DIR, before any request of the run; a folder that cannot
    /// be used ends the run (exit 2, as for an argument the library refuses).
    func apply(console: Console) throws {
        guard let folder, let maxBytes else { return }
        guard HttpRequest.setCacheFolder(folder, maxBytes: maxBytes) else {
            throw console.exit(2, "--cache \(folder): \(HttpRequest.cacheFolderError ?? "the folder cannot be used")")
        }
    }

    /// The request's policy: --offline reads the cache only; otherwise the library's default
    /// (read and update, as the response headers and the -H fields say).
    func configure(_ request: HttpRequest) -> Bool {
        offline ? request.setCachePolicy(.readForced) : true
    }
}
