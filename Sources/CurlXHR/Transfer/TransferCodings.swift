/// The transfer codings of a response's `Transfer-Encoding` (RFC 9112, 6.1) that libcurl
/// undoes itself. A response under another one (say `Transfer-Encoding: foo`, read until the
/// connection closes) is refused by libcurl while it decodes bodies: the request is then sent
/// again with libcurl's decoding off, and the body is delivered as it came (chunked framing
/// still undone), its content coding left as it is.
enum TransferCodings {
    static let known: Set<String> = ["chunked", "identity", "gzip", "x-gzip", "deflate", "br", "zstd"]

    /// Whether `value` names a coding libcurl does not undo.
    static func hasUnknown(_ value: String) -> Bool {
        value.split(separator: ",").contains { coding in
            let name = HeaderFieldNames.trimmed(coding.split(separator: ";").first ?? "").lowercased()
            return !name.isEmpty && !known.contains(name)
        }
    }
}
