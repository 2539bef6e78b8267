import CurlXHR
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The request body the options give (-d and its kin, --json, -T), and the send with it.
extension Fetch {
    struct Body {
        enum Kind {
            case none
            case bytes(Data)
            case file(String)
        }
        var kind: Kind
        /// Bytes to upload, for the progress bar; nil without a body.
        var size: Int64?
    }

    /// The bytes of `@FILE` (`@-`: standard input), or the text itself.
    static func contents(_ argument: String, console: Console) throws -> Data {
        guard argument.hasPrefix("@") else { return Data(argument.utf8) }
        return try file(String(argument.dropFirst()), console: console)
    }

    /// The bytes of FILE (`-`: standard input); exit 26 when it cannot be read.
    static func file(_ path: String, console: Console) throws -> Data {
        guard let bytes = path == "-" ? StandardStreams.readAll(0) : StandardStreams.read(file: path) else {
            throw console.exit(26, "cannot read \(path)")
        }
        return bytes
    }

    /// The -d, --data-binary, --data-raw and --data-urlencode data as curl sends it, joined
    /// with `&`: -d @FILE without the file's CR and LF bytes, --data-binary @FILE as it is,
    /// --data-raw as given, --data-urlencode encoded.
    func formData(console: Console) throws -> Data {
        var joined = Data()
        for (index, argument) in data.enumerated() {
            if index > 0 { joined.append(UInt8(ascii: "&")) }
            switch argument.kind {
            case .ascii:
                let bytes = try Self.contents(argument.text, console: console)
                joined.append(contentsOf: argument.text.hasPrefix("@") ? bytes.filter { $0 != 0x0D && $0 != 0x0A } : bytes)
            case .binary: joined.append(try Self.contents(argument.text, console: console))
            case .raw: joined.append(contentsOf: Array(argument.text.utf8))
            case .urlencode: joined.append(contentsOf: Array(try Self.urlencoded(argument.text, console: console).utf8))
            }
        }
        return joined
    }

    /// curl's --data-urlencode: CONTENT, =CONTENT, NAME=CONTENT, @FILE or NAME@FILE, whichever
    /// of `=` and `@` comes first deciding; the content percent-encoded (all but A-Z a-z 0-9
    /// - . _ ~), a space as +.
    static func urlencoded(_ argument: String, console: Console) throws -> String {
        guard let mark = argument.firstIndex(where: { $0 == "=" || $0 == "@" }) else { return formEncoded(Data(argument.utf8)) }
        let name = String(argument[..<mark])
        let rest = String(argument[argument.index(after: mark)...])
        let content = argument[mark] == "@" ? try file(rest, console: console) : Data(rest.utf8)
        return (name.isEmpty ? "" : name + "=") + formEncoded(content)
    }

    static func formEncoded(_ bytes: Data) -> String {
        percentEncoded(bytes).replacing("%20", with: "+")
    }

    static func percentEncoded(_ bytes: some Sequence<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The data, for -G's query.
    func queryData(console: Console) throws -> String? {
        data.isEmpty ? nil : String(decoding: try formData(console: console), as: UTF8.self)
    }

    func requestBody(console: Console) throws -> Body {
        if get { return Body(kind: .none, size: nil) }
        if !data.isEmpty {
            let bytes = try formData(console: console)
            return Body(kind: .bytes(bytes), size: Int64(bytes.count))
        }
        if !json.isEmpty {
            var bytes = Data()
            for part in json { bytes += try Self.contents(part, console: console) }
            return Body(kind: .bytes(bytes), size: Int64(bytes.count))
        }
        if let uploadFile {
            if uploadFile == "-" {
                let bytes = try Self.file("-", console: console)
                return Body(kind: .bytes(bytes), size: Int64(bytes.count))
            }
            return Body(kind: .file(uploadFile), size: StandardStreams.size(of: uploadFile))
        }
        return Body(kind: .none, size: nil)
    }

    /// curl's -T to a URL whose path ends in `/` (or that has none): the file's name,
    /// percent-encoded, is appended (not for standard input).
    func uploadTarget(_ url: String) -> String {
        guard let uploadFile, uploadFile != "-" else { return url }
        let name = uploadFile.split(separator: "/").last.map(String.init) ?? uploadFile
        let base = url.prefix { $0 != "?" && $0 != "#" }
        let afterScheme = base.firstRange(of: "://").map { base[$0.upperBound...] } ?? base
        if !afterScheme.contains("/") { return base + "/" + Self.percentEncoded(name.utf8) + url.dropFirst(base.count) }
        guard base.hasSuffix("/") else { return url }
        return base + Self.percentEncoded(name.utf8) + url.dropFirst(base.count)
    }

    /// Sends `request` with the run's body.
    func send(_ request: HttpRequest, _ body: Body) -> Bool {
        switch body.kind {
        case .none: request.send(timeout: maxTime)
        case .bytes(let data): request.sendData(data, timeout: maxTime)
        case .file(let path): request.sendWithFile(path, timeout: maxTime)
        }
    }
}
