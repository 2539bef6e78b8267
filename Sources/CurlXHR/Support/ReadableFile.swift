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
