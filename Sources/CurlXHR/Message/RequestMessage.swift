#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request header field as set by `setRequestHeader`.
struct HeaderField: Sendable, Equatable {
    var name: String
    var value: String
    /// Set by `removeRequestHeader`: the field libcurl would add is left out.
    var removes = false

    /// The line libcurl sends: `Name: value`, or `Name;` for an empty value (libcurl drops a
    /// `Name:` line, which would remove a header of its own: what `removes` asks for).
    var curlLine: String { removes ? "\(name):" : value.isEmpty ? "\(name);" : "\(name): \(value)" }
}

/// What `open` set and the calls between `open` and `send` added: one request message.
struct RequestMessage: Sendable {
    /// Whether libcurl may answer a Negotiate challenge: with the credentials given for it,
    /// or, when none were given, with tickets already in a credential cache.
    var usesNegotiate: Bool {
        credentials.map { $0.scheme == .negotiate } ?? !urlHasUser
    }

    /// The Negotiate user and password whose tickets must come from the KDC before sending.
    var ticketCredentials: Credentials? {
        credentials.flatMap { $0.scheme == .negotiate && !$0.user.isEmpty ? $0 : nil }
    }

    var method = "GET"
    private(set) var url = ""
    /// `url` as libcurl parsed it (nil for a URL that does not parse): handed to libcurl with
    /// it, so libcurl does not parse the text again for each send.
    private(set) var parsedURL: ParsedURL?
    /// The URL is https (`open` accepts only http and https).
    var isSecure: Bool { parsedURL?.isHTTPS ?? false }
    var isAsync = false
    var credentials: Credentials?
    /// The URL carries its own user name (`http://user:password@host/`).
    var urlHasUser = false
    /// Header fields in the order they were set; a repeated name is joined with ", ".
    var headers: [HeaderField] = []
    /// Form values in the order they were set.
    var formValues: [(key: String, value: String)] = []
    /// Files of the form (`addPostFile`), in the order they were added: with any, the form
    /// goes as `multipart/form-data`.
    var formFiles: [FormFile] = []
    /// The form goes as `multipart/form-data` even without files (the `xhr` tool's `-F`).
    var multipartForm = false

    init(method: String = "GET", url: String = "", isAsync: Bool = false, credentials: Credentials? = nil) {
        self.method = method
        self.url = url
        if case .success(let parsed) = MessageValidation.parseURL(url) { parsedURL = parsed }
        self.isAsync = isAsync
        self.credentials = credentials
    }

    /// Becomes the message of a new `open`, field by field: a new message made and moved in
    /// was copied on the way (Swift retained every field of it and released them after).
    /// `parsedURL`: `url` as `MessageValidation.parseURL` parsed it (nil: not parsed, and
    /// taken as carrying no user name).
    mutating func reopen(method: String, url: String, parsedURL: ParsedURL?, isAsync: Bool, credentials: Credentials?) {
        self.method = method
        self.url = url
        self.parsedURL = parsedURL
        self.isAsync = isAsync
        // Most opens have none, as before: no copy of an optional made through its witnesses.
        if credentials != nil || self.credentials != nil { self.credentials = credentials }
        urlHasUser = parsedURL?.hasUser ?? false
        // Keeping the capacity: the same fields usually follow, set one at a time (one
        // buffer of that size, not one growth after another).
        if !headers.isEmpty { headers.removeAll(keepingCapacity: true) }
        if !formValues.isEmpty { formValues = [] }
        if !formFiles.isEmpty { formFiles = [] }
        multipartForm = false
    }

    func hasHeader(_ name: String) -> Bool {
        headers.contains { MessageValidation.sameFieldName($0.name.utf8, name.utf8) }
    }

    mutating func setHeader(_ name: String, value: String) {
        if let index = headers.firstIndex(where: { MessageValidation.sameFieldName($0.name.utf8, name.utf8) }) {
            if headers[index].removes {
                headers[index] = HeaderField(name: name, value: value)
            } else {
                headers[index].value += ", " + value
            }
        } else {
            headers.append(HeaderField(name: name, value: value))
        }
    }

    /// Leaves the field out of the request: one set before, and one libcurl would add.
    mutating func removeHeader(_ name: String) {
        headers.removeAll { MessageValidation.sameFieldName($0.name.utf8, name.utf8) }
        headers.append(HeaderField(name: name, value: "", removes: true))
    }

    /// Replaces the value of the key with the same bytes: String's == also equates spellings
    /// of a text that differ on the wire ("é" and "e" with a combining accent).
    mutating func setFormValue(_ value: String, forKey key: String) {
        if let index = formValues.firstIndex(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
            formValues[index].value = value
        } else {
            formValues.append((key, value))
        }
    }

    /// The `application/x-www-form-urlencoded` body built from the form values.
    var formBody: [UInt8] {
        var body: [UInt8] = []
        for pair in formValues { FormEncoding.append(pair.key, value: pair.value, to: &body) }
        return body
    }
}

/// A file of a `multipart/form-data` form, streamed from disk by libcurl as it is sent.
struct FormFile: Sendable, Equatable {
    var key: String
    var path: String
    /// The part's file name (nil: the path's last component) and type (nil: libcurl's guess
    /// from the name's extension, else `application/octet-stream`).
    var fileName: String?
    var contentType: String?
}

/// The body given to `send`.
enum RequestBody: Sendable {
    case none
    /// A `multipart/form-data` form: the values, then the files.
    case multipart(values: [(key: String, value: String)], files: [FormFile])
    /// The caller's bytes, kept (not copied) until libcurl has sent them.
    case bytes(Data, contentType: String?)
    /// The bytes of the file at `path` from `offset` on (as many as the send's file size says).
    case file(path: String, offset: Int64 = 0)
}
