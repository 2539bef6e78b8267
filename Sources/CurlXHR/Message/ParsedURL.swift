import CCurlShim

/// A request's URL as libcurl's URL API parsed it (a `CURLU` handle), made once by `open` and
/// kept with the message.
///
/// The engine hands it to libcurl with `CURLOPT_CURLU`, and libcurl copies its parts for each
/// send instead of parsing the URL's text and writing it out again, as it does for a URL set
/// with `CURLOPT_URL` (in libcurl 7.88, about 11,000 instructions a request: BENCHMARKS.md).
/// Never changed once made: libcurl only reads it (`curl_url_dup`, on the engine thread), and
/// whoever set it on an easy handle keeps a reference while it is set there.
final class ParsedURL: @unchecked Sendable {
    /// libcurl's handle, owned here.
    let handle: OpaquePointer
    /// The URL carries a user name (`http://user:password@host/`).
    let hasUser: Bool

    init(handle: OpaquePointer, hasUser: Bool) {
        self.handle = handle
        self.hasUser = hasUser
    }

    /// The handle as `CURLOPT_CURLU` takes it.
    var option: UnsafeMutableRawPointer { UnsafeMutableRawPointer(handle) }

    deinit { curl_url_cleanup(handle) }
}
