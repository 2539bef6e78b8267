import CurlXHR
import Foundation

/// The request body the options give (-d, --data-binary, --json, -T), and the send with it.
extension Fetch {
    struct Body {
        enum Kind {
            case none
            case text(String)
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
        let path = String(argument.dropFirst())
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw console.exit(26, "cannot read \(path)")
        }
        return bytes
    }

    /// The -d data as curl sends it: each value, or with `@FILE` the file's bytes without its
    /// CR and LF bytes, joined with `&`.
    func formData(console: Console) throws -> Data {
        var joined = Data()
        for (index, value) in data.enumerated() {
            if index > 0 { joined.append(UInt8(ascii: "&")) }
            let bytes = try Self.contents(value, console: console)
            joined.append(contentsOf: value.hasPrefix("@") ? bytes.filter { $0 != 0x0D && $0 != 0x0A } : bytes)
        }
        return joined
    }

    /// The -d and --data-binary data, for -G's query.
    func queryData(console: Console) throws -> String? {
        if !data.isEmpty { return String(decoding: try formData(console: console), as: UTF8.self) }
        if let dataBinary { return String(decoding: try Self.contents(dataBinary, console: console), as: UTF8.self) }
        return nil
    }

    func requestBody(console: Console) throws -> Body {
        if get { return Body(kind: .none, size: nil) }
        if !data.isEmpty {
            let bytes = try formData(console: console)
            return Body(kind: .bytes(bytes), size: Int64(bytes.count))
        }
        if let dataBinary {
            let bytes = try Self.contents(dataBinary, console: console)
            return Body(kind: .bytes(bytes), size: Int64(bytes.count))
        }
        if !json.isEmpty {
            var bytes = Data()
            for part in json { bytes += try Self.contents(part, console: console) }
            return Body(kind: .bytes(bytes), size: Int64(bytes.count))
        }
        if let uploadFile {
            let size = (try? FileManager.default.attributesOfItem(atPath: uploadFile)[.size] as? Int64) ?? nil
            return Body(kind: .file(uploadFile), size: size)
        }
        return Body(kind: .none, size: nil)
    }

    /// Sends `request` with the run's body.
    func send(_ request: HttpRequest, _ body: Body) -> Bool {
        switch body.kind {
        case .none: request.send(timeout: maxTime)
        case .text(let text): request.send(text, timeout: maxTime)
        case .bytes(let data): request.sendData(data, timeout: maxTime)
        case .file(let path): request.sendWithFile(path, timeout: maxTime)
        }
    }
}
