import CCurlShim

/// A `multipart/form-data` body with libcurl's MIME API: the values as parts, the files as
/// parts libcurl reads from disk as it sends them (never whole in memory), rewound by libcurl
/// for a redirect or an authentication round. Built on the engine thread for each transfer.
enum MultipartForm {
    struct Problem: Error {
        let message: String
    }

    /// The form for `easy`; the caller frees it with `curl_mime_free` once libcurl is done.
    static func build(on easy: UnsafeMutableRawPointer, values: [(key: String, value: String)],
                      files: [FormFile]) -> Result<OpaquePointer, Problem> {
        guard let mime = curl_mime_init(easy) else { return .failure(Problem(message: "out of memory building the form")) }
        func fail(_ text: String) -> Result<OpaquePointer, Problem> {
            curl_mime_free(mime)
            return .failure(Problem(message: text))
        }
        for (key, value) in values {
            guard let part = curl_mime_addpart(mime), curl_mime_name(part, key) == CURLE_OK else {
                return fail("out of memory building the form")
            }
            let code = value.utf8CString.withUnsafeBufferPointer { curl_mime_data(part, $0.baseAddress, $0.count - 1) }
            guard code == CURLE_OK else { return fail("out of memory building the form") }
        }
        for file in files {
            guard let part = curl_mime_addpart(mime), curl_mime_name(part, file.key) == CURLE_OK else {
                return fail("out of memory building the form")
            }
            // Sets the file name to the path's last component; libcurl opens the file when it
            // sends the part.
            guard curl_mime_filedata(part, file.path) == CURLE_OK else { return fail("cannot read '\(file.path)'") }
            if let name = file.fileName, curl_mime_filename(part, name) != CURLE_OK { return fail("out of memory building the form") }
            if let type = file.contentType, curl_mime_type(part, type) != CURLE_OK { return fail("out of memory building the form") }
        }
        return .success(mime)
    }
}
