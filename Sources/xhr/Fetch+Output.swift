import CurlXHR
#if canImport(Glibc)
import Glibc
#endif

/// Where a run's body goes (-o, -O, -J, -C, --create-dirs), what goes to standard error
/// (--stderr, the progress bar) and whose credentials it sends (-u, --netrc).
extension Fetch {
    /// Where -C continues: the offset, and whether the body is appended to -o's file as curl
    /// does (false: xhr's own FILE.part, or no -C).
    struct ResumePoint {
        var offset: Int64 = 0
        var continuesFile = false
    }

    /// -C - continues a FILE.part an earlier xhr left (with its validator) the library's way;
    /// otherwise, and always with -C OFFSET, FILE itself as curl does.
    static func continuesAsCurl(_ output: String) -> Bool {
        access(output + ".part.validator", F_OK) != 0
    }

    func resumePoint(console: Console) throws -> ResumePoint {
        guard let continueAt, let output else { return ResumePoint() }
        if continueAt == "-", !Self.continuesAsCurl(output) {
            return ResumePoint(offset: StandardStreams.size(of: output + ".part") ?? 0, continuesFile: false)
        }
        let offset = continueAt == "-" ? StandardStreams.size(of: output) ?? 0 : Int64(continueAt) ?? 0
        return ResumePoint(offset: offset, continuesFile: true)
    }

    /// The response -J reads its name from: set when its request is made.
    final class ResponseHead {
        var request: HttpRequest?
    }

    func output(for target: String, resume: ResumePoint, head: ResponseHead, console: Console) throws -> Output {
        var mode = Output.FileMode(createsFolders: createDirs)
        if remoteName {
            guard let name = Self.remoteFileName(target) else { throw console.exit(23, "-O: the URL has no file name to write to") }
            guard remoteHeaderName else { return .file(inOutputDirectory(name), mode: mode) }
            // -J: the name the response gives, read at the first write; never over a file.
            mode.exclusive = true
            return .named(by: {
                guard let field = head.request?.getResponseHeader("Content-Disposition") else { return inOutputDirectory(name) }
                return RemoteHeaderName.fileName(field).map(inOutputDirectory)
            }, mode: mode)
        }
        if continueAt != nil, let output {
            guard resume.continuesFile else { return .discard() }  // the library writes FILE.part
            mode.appends = true
            let file = Output.file(output, mode: mode)
            guard file.openNow() else { throw console.exit(23, "cannot write \(output)") }
            return file
        }
        guard let output, outputs.first != "-" else { return .standardOutput() }  // -o -: standard output, as curl
        return .file(output, mode: mode)
    }

    /// --stderr FILE: standard error goes to FILE (`-`: standard output) for the whole run.
    func redirectStandardError() throws {
        guard let errorFile else { return }
        let descriptor = errorFile == "-" ? dup(1) : open(errorFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw ValidationError("--stderr: cannot write \(errorFile)") }
        dup2(descriptor, 2)
        close(descriptor)
    }

    /// The progress bar: on a terminal, or with -#; never with -s or --no-progress-meter.
    var showsProgress: Bool {
        !silent && !noProgressMeter && (progressBar || isatty(2) != 0)
    }

    /// -u's credentials, or with --netrc those of the URL's host in the netrc file.
    func credentials(console: Console) -> String? {
        if let user { return user }
        guard netrc != .ignored, let host = URLShape.host(of: url) else { return nil }
        let path = netrcFile ?? (getenv("HOME").map { String(cString: $0) + "/.netrc" } ?? ".netrc")
        // As curl 7.88: a netrc file that cannot be read gives no credentials, and no error.
        guard let bytes = StandardStreams.read(file: path) else { return nil }
        return Netrc.credentials(in: String(decoding: bytes, as: UTF8.self), host: host)
    }
}
