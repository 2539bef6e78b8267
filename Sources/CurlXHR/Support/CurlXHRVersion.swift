/// The library's version, as the default `User-Agent` names it: `CURLXHR_VERSION` of
/// curlxhr.h (a test checks they agree).
enum CurlXHRVersion {
    static let string = "0.2.0"
}
