import CCurlShim

/// The transfer codings of a response's `Transfer-Encoding` (RFC 9112, 6.1) that libcurl
/// undoes itself. A response under another one (say `Transfer-Encoding: foo`, read until the
/// connection closes) is refused by libcurl while it decodes bodies: the request is then sent
/// again with libcurl's decoding off, and the body is delivered as it came (chunked framing
/// still undone), its content coding left as it is.
enum TransferCodings {
    static let known: Set<String> = ["chunked", "identity", "gzip", "x-gzip", "deflate", "br", "zstd"]

    /// The `Accept-Encoding` libcurl sends when asked for every content coding it decodes
    /// (`CURLOPT_ACCEPT_ENCODING` ""), as it writes it.
    static let acceptedEncodings: String = {
        var names: [String] = []
        if cxhr_libcurl_decodes(Int32(UInt8(ascii: "g"))) != 0 { names += ["deflate", "gzip"] }
        if cxhr_libcurl_decodes(Int32(UInt8(ascii: "b"))) != 0 { names.append("br") }
        if cxhr_libcurl_decodes(Int32(UInt8(ascii: "z"))) != 0 { names.append("zstd") }
        return names.joined(separator: ", ")
    }()

    /// Whether `value` names a coding libcurl does not undo.
    static func hasUnknown(_ value: String) -> Bool {
        value.split(separator: ",").contains { coding in
            let name = HeaderFieldNames.trimmed(coding.split(separator: ";").first ?? "").lowercased()
            return !name.isEmpty && !known.contains(name)
        }
    }
}
