#if canImport(Glibc)
import Glibc
#endif

/// Where `setResponseFile` asked the body to go: `path.part` while it arrives, renamed over
/// `path` when a 2xx response completes. A failure leaves the `.part` (with the validator
/// beside it, `path.part.validator`, for a resumed download); a response other than 2xx
/// leaves both files alone and its body goes to the receive buffer.
///
/// Resuming (`resume: true` with a `.part` and its validator present) asks for the rest:
/// `Range: bytes=<size of the .part>-` with `If-Range: <validator>`. A 206 whose range starts
/// there is appended; a 200 (the file changed) starts the `.part` over; any other 206 is
/// refused, so no file is ever made of two versions.
///
/// The `.part` and its validator are reached through their folder, opened once for the
/// response (`PrivateFiles`), and never through a symbolic link planted in their place: a new
/// `.part` or validator replaces what was there, a `.part` to continue must be a file of its
/// own (a link is no `.part`: the download starts over), and an appended `.part` is opened
/// with `O_NOFOLLOW`.
struct FileSink {
    /// The request's setting: the file and whether to resume it.
    struct Setting: Sendable, Equatable {
        var path: String
        var resume: Bool

        var partPath: String { path + ".part" }
        var validatorPath: String { path + ".part.validator" }
        /// The names in the folder of `path`.
        var name: String { PrivateFiles.name(of: path) }
        var partName: String { name + ".part" }
        var validatorName: String { name + ".part.validator" }

        /// Why the body cannot go to `path`, or nil: its folder must exist and be writable,
        /// and `path` must not be a folder.
        static func problem(_ path: String) -> String? {
            guard !path.isEmpty else { return "the response file's path is empty" }
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return "'\(MessageValidation.escaped(path))' is a folder" }
            let folder = PrivateFiles.parent(of: path)
            guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                return "the folder of '\(MessageValidation.escaped(path))' does not exist"
            }
            guard access(folder, W_OK) == 0 else { return "the folder of '\(MessageValidation.escaped(path))' is not writable" }
            return nil
        }
    }

    /// What becomes of a response's body.
    enum Plan: Equatable {
        /// Into the `.part`: a new one, or appended to what it holds.
        case file(append: Bool)
        /// Not the file's: into the receive buffer (a response other than 2xx).
        case memory
        /// Refused: the transfer fails with this text.
        case refuse(String)
    }

    /// The plan for a response with `status`, `Content-Range` and `validator`, for a send that
    /// asked for the bytes from `resumeOffset` on (0: from the start) of the version `expected`
    /// names. A 206 must start there and carry that validator: a server that ignores If-Range
    /// but honours Range would otherwise send a range of another version.
    static func plan(status: Int, contentRange: String?, validator: String?, resumeOffset: Int64, expected: String?) -> Plan {
        guard (200..<300).contains(status) else { return .memory }
        guard resumeOffset > 0 else { return .file(append: false) }
        if status != 206 { return .file(append: false) }  // the whole body: start over
        guard let start = contentRange.flatMap(rangeStart), start == resumeOffset else {
            return .refuse("the server resumed at another byte (Content-Range: \(contentRange ?? "none")) than the \(resumeOffset) bytes already received")
        }
        guard validator == expected else {
            return .refuse("the server sent a range of another version (validator \(validator ?? "none"), the .part's \(expected ?? "none"))")
        }
        return .file(append: true)
    }

    /// The first byte of `bytes a-b/n`.
    static func rangeStart(_ contentRange: String) -> Int64? {
        let parts = contentRange.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes", let dash = parts[1].firstIndex(of: "-") else { return nil }
        return Int64(parts[1][..<dash])
    }

    let setting: Setting
    /// The library decodes the body (`disableContentDecoding` not called): a compressed body
    /// is decoded on the way in, so byte offsets of a later range would not match the file,
    /// which then keeps no validator (no resume).
    let decoding: Bool
    /// Bytes of the `.part` kept from an earlier send, asked to be continued (0: none).
    let resumeOffset: Int64
    /// The validator sent with `If-Range` (nil: none).
    let validator: String?
    private var descriptor: Int32 = -1
    /// The folder of the file, open while the `.part` is.
    private var folder: Int32 = -1
    /// The current response's body goes to the file.
    private(set) var isActive = false
    /// Why writing failed (the transfer fails with it).
    private(set) var failure: String?

    /// The sink for a send: resumes when asked and a `.part` and its validator are there.
    init(_ setting: Setting, decoding: Bool) {
        self.setting = setting
        self.decoding = decoding
        var info = stat()
        let validator = setting.resume ? Self.readValidator(setting.validatorPath) : nil
        // lstat: a link is no .part (its target's size is not what was received).
        if let validator, lstat(setting.partPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 {
            resumeOffset = Int64(info.st_size)
            self.validator = validator
        } else {
            resumeOffset = 0
            self.validator = nil
        }
    }

    /// The final head arrived: opens the `.part` when its body is the file's (``plan(status:contentRange:validator:resumeOffset:expected:)``).
    mutating func begin(_ head: RecordedHead) {
        let newValidator = Self.validator(etag: head.fieldValue("ETag"), lastModified: head.fieldValue("Last-Modified"))
        let decoded = decoding && ResponseHead.isEncoded(head.fieldValue("Content-Encoding"))
        begin(Self.plan(status: head.status, contentRange: head.fieldValue("Content-Range"), validator: newValidator,
                        resumeOffset: resumeOffset, expected: validator),
              validator: decoded ? nil : newValidator)
    }

    /// Carries out `plan`, keeping `newValidator` beside a new `.part`.
    private mutating func begin(_ plan: Plan, validator newValidator: String?) {
        closeFile()
        isActive = false
        switch plan {
        case .memory:
            return
        case .refuse(let text):
            failure = text
            return
        case .file(let append):
            do throws(PrivateFiles.Failure) {
                folder = try PrivateFiles.openFolder(of: setting.path, creating: false)
                descriptor = append
                    ? try PrivateFiles.openFile(setting.partName, in: folder, O_WRONLY | O_APPEND)
                    : try PrivateFiles.makeFile(setting.partName, in: folder, mode: 0o644)
            } catch {
                closeFile()
                failure = "cannot write '\(setting.partPath)': \(error)"
                return
            }
            isActive = true
            if !append { saveValidator(newValidator) }
        }
    }

    /// The current response's body goes to the file (or its failure ends the send).
    var takesBody: Bool { isActive || failure != nil }

    /// What became of bytes offered to the file.
    enum Write {
        /// In the `.part`.
        case written
        /// Not the file's body (a response other than 2xx): for the owner.
        case notTheFiles
        /// Not written: the file failed (``failure``), the send ends.
        case failed
        /// Not written: the owner let go of the send (``Transfer/abandonOutput()``).
        case abandoned
    }

    /// Writes body bytes of the current response into the `.part`, when it is the file's.
    mutating func write(_ bytes: UnsafeRawBufferPointer) -> Write {
        guard failure == nil else { return .failed }
        guard isActive else { return .notTheFiles }
        guard var next = bytes.baseAddress else { return .written }
        var left = bytes.count
        while left > 0 {
            let written = Glibc.write(descriptor, next, left)
            if written < 0 {
                if errno == EINTR { continue }
                failure = "cannot write '\(setting.partPath)': \(String(cString: strerror(errno)))"
                return .failed
            }
            left -= written
            next += written
        }
        return .written
    }

    /// The response completed: the `.part` becomes `path`. Returns why it could not.
    mutating func complete() -> String? {
        guard isActive else { return failure }
        isActive = false
        let closed = Glibc.close(descriptor) == 0
        descriptor = -1
        defer { closeFile() }
        guard closed, failure == nil else {
            return failure ?? "cannot write '\(setting.partPath)': \(String(cString: strerror(errno)))"
        }
        guard renameat(folder, setting.partName, folder, setting.name) == 0 else {
            return "cannot rename '\(setting.partPath)' to '\(setting.path)': \(String(cString: strerror(errno)))"
        }
        _ = unlinkat(folder, setting.validatorName, 0)
        return nil
    }

    /// The send ended, with `failure` or not: on success the `.part` becomes the file (a
    /// failure when it cannot); otherwise it stays for a resume. Returns the failure the send
    /// ends with (a write that failed stopped libcurl: its words are less precise than the file's).
    mutating func finish(_ failure: TransferFailure?) -> TransferFailure? {
        if failure == nil, let problem = complete() { return TransferFailure(kind: .other, text: problem, code: 23) }
        discard()
        if failure != nil, let own = self.failure { return TransferFailure(kind: .other, text: own, code: 23) }  // CURLE_WRITE_ERROR
        return failure
    }

    /// The send ended otherwise (a failure, an abort): the `.part` stays for a resume.
    mutating func discard() {
        closeFile()
        isActive = false
    }

    private mutating func closeFile() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
        if folder >= 0 { _ = Glibc.close(folder) }
        folder = -1
    }

    /// Keeps the response's validator beside the `.part` (or removes a stale one).
    /// A validator that cannot be kept only costs a later resume.
    private func saveValidator(_ validator: String?) {
        guard let validator else {
            _ = unlinkat(folder, setting.validatorName, 0)
            return
        }
        guard let file = try? PrivateFiles.makeFile(setting.validatorName, in: folder, mode: 0o644) else { return }
        _ = PrivateFiles.writeAll(Array((validator + "\n").utf8), to: file)
        _ = Glibc.close(file)
    }

    private static func readValidator(_ path: String) -> String? {
        let file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { _ = Glibc.close(file) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let line = bytes[..<count].prefix { $0 != 0x0A && $0 != 0x0D }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }

    /// The validator `If-Range` may carry for a response: a strong `ETag`, else its
    /// `Last-Modified` (nil: none, and a later resume starts over).
    static func validator(etag: String?, lastModified: String?) -> String? {
        if let etag, etag.hasPrefix("\"") { return etag }
        return lastModified
    }
}
