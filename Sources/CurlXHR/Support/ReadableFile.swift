#if canImport(Glibc)
import Glibc
#endif

/// Opens a path that must name a regular file this process can read.
enum ReadableFile {
    struct Problem: Error {
        let message: String
    }

    static func open(_ path: String) -> Result<(descriptor: Int32, size: Int64), Problem> {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return .failure(Problem(message: "cannot open '\(MessageValidation.escaped(path))': \(String(cString: strerror(errno)))"))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            return .failure(Problem(message: "'\(MessageValidation.escaped(path))' is not a regular file"))
        }
        return .success((descriptor, Int64(info.st_size)))
    }

    /// Why `path` cannot be read, or nil when it can.
    static func problem(_ path: String) -> String? {
        switch open(path) {
        case .failure(let problem):
            return problem.message
        case .success(let file):
            _ = Glibc.close(file.descriptor)
            return nil
        }
    }
}

/// A folder of CA certificates named by their subject hashes (`openssl rehash`, `c_rehash`),
/// as libcurl's `CURLOPT_CAPATH` reads it.
enum CertificateFolder {
    /// Why `path` cannot be used as the folder, or nil when it can: it must be a folder itself
    /// (not a symbolic link to one), searchable and readable, named without CR, LF or NUL.
    static func problem(_ path: String) -> String? {
        let shown = MessageValidation.escaped(path)
        if path.isEmpty || path.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) {
            return "the CA folder '\(shown)' is empty or contains CR, LF or NUL"
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return "cannot use the CA folder '\(shown)': \(String(cString: strerror(errno)))" }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: return "the CA folder '\(shown)' is a symbolic link: name the folder itself"
        default: return "'\(shown)' is not a folder"
        }
        guard access(path, R_OK | X_OK) == 0 else { return "cannot read the CA folder '\(shown)': \(String(cString: strerror(errno)))" }
        return nil
    }
}
